package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/defaulting"
	"github.com/tollgate-dev/tollgate/internal/offline"
)

// notReplayable is why an admission request in the log cannot be rebuilt;
// the run counts it under its reason.
type notReplayable struct{ reason string }

func (n *notReplayable) Error() string { return n.reason }

func cannot(format string, args ...any) error {
	return &notReplayable{reason: fmt.Sprintf(format, args...)}
}

// connectSubresources are the subresources the apiserver admits as CONNECT,
// whatever the verb (connectOptions gives their objects).
var connectSubresources = map[string]bool{
	"pods/exec": true, "pods/attach": true, "pods/portforward": true,
	"pods/proxy": true, "services/proxy": true, "nodes/proxy": true,
}

// operation is the admission operation of an event; "" for a request
// admission never sees (get, list, watch).
func operation(ev *auditv1.Event) admission.Operation {
	ref := ev.ObjectRef
	if ref.APIGroup == "" {
		if connectSubresources[ref.Resource+"/"+ref.Subresource] {
			return admission.Connect
		}
	}
	switch ev.Verb {
	case "create":
		return admission.Create
	case "update":
		return admission.Update
	case "patch":
		if ev.ResponseStatus != nil && ev.ResponseStatus.Code == 201 {
			return admission.Create // an apply that created the object
		}
		return admission.Update
	case "delete", "deletecollection":
		return admission.Delete
	}
	return ""
}

// build is the admission request the apiserver gave the webhooks for the
// event; old is the object as stored before it (nil when the log does not
// hold it). The error is a *notReplayable when the event does not hold
// what the request needs.
func build(ev *auditv1.Event, op admission.Operation, old []byte) (*admission.Request, schema.GroupVersionKind, error) {
	ref := ev.ObjectRef
	if ev.Verb == "deletecollection" {
		return nil, schema.GroupVersionKind{}, cannot("deletecollection: the log holds one event for all the objects deleted, and none of them")
	}
	if ev.Level == auditv1.LevelMetadata && op != admission.Connect {
		return nil, schema.GroupVersionKind{}, cannot("level Metadata: the event holds no object")
	}
	user := ev.User
	if ev.ImpersonatedUser != nil {
		user = *ev.ImpersonatedUser
	}
	query, err := url.ParseQuery(queryOf(ev.RequestURI))
	if err != nil {
		return nil, schema.GroupVersionKind{}, cannot("requestURI %q: %v", ev.RequestURI, err)
	}
	req := &admission.Request{
		UID:         string(ev.AuditID),
		Resource:    schema.GroupVersionResource{Group: ref.APIGroup, Version: ref.APIVersion, Resource: ref.Resource},
		SubResource: ref.Subresource,
		Name:        ref.Name,
		Namespace:   ref.Namespace,
		Operation:   op,
		UserInfo:    admission.UserInfo{Username: user.Username, UID: user.UID, Groups: user.Groups},
		DryRun:      query.Get("dryRun") == metav1.DryRunAll,
	}
	if ref.APIGroup == "" && ref.Resource == "namespaces" && ref.Subresource == "" {
		req.Namespace = ref.Name // the apiserver's request namespace of a Namespace is its name
	}
	var object []byte
	switch op {
	case admission.Connect:
		object, req.Kind, err = connectOptions(ref.Resource+"/"+ref.Subresource, query)
		if err != nil {
			return nil, schema.GroupVersionKind{}, err
		}
		req.SetObjects(object, nil)
		return req, req.Kind, nil
	case admission.Delete:
		if old == nil {
			return nil, schema.GroupVersionKind{}, cannot("DELETE of an object the log does not hold before it: no oldObject")
		}
		req.Kind = kindOf(old)
		req.SetObjects(nil, old)
		return req, req.Kind, nil
	case admission.Update:
		if old == nil {
			return nil, schema.GroupVersionKind{}, cannot("UPDATE of an object the log does not hold before it: no oldObject")
		}
	}
	if object, err = requestObject(ev, old); err != nil {
		return nil, schema.GroupVersionKind{}, err
	}
	h := head(object)
	req.Kind = schema.FromAPIVersionAndKind(h.APIVersion, h.Kind)
	if req.Kind.Kind == "" {
		return nil, schema.GroupVersionKind{}, cannot("the request object names no apiVersion and kind")
	}
	if ref.Namespace != "" && h.Metadata.Namespace == "" {
		// The apiserver gives the object the request's namespace before admission.
		if object, err = offline.WithNamespace(object, ref.Namespace); err != nil {
			return nil, schema.GroupVersionKind{}, cannot("request object: %v", err)
		}
	}
	if object, _, err = defaulting.Object(req.Kind, object); err != nil {
		return nil, schema.GroupVersionKind{}, cannot("request object: %v", err)
	}
	if req.Name == "" {
		req.Name = h.Metadata.Name
	}
	if op == admission.Update {
		req.SetObjects(object, old)
	} else {
		req.SetObjects(object, nil)
	}
	return req, req.Kind, nil
}

// requestObject is the object the webhooks saw for a CREATE or UPDATE:
// what the client sent, or for a patch, the stored object it made (a
// request that succeeded) or the patch applied to the object before it.
func requestObject(ev *auditv1.Event, old []byte) ([]byte, error) {
	if ev.Verb != "patch" {
		if ev.RequestObject == nil || len(ev.RequestObject.Raw) == 0 {
			return nil, cannot("level %s: the event holds no request object", ev.Level)
		}
		return ev.RequestObject.Raw, nil
	}
	if succeeded(ev) && isObject(ev) {
		return ev.ResponseObject.Raw, nil
	}
	if ev.RequestObject == nil || len(ev.RequestObject.Raw) == 0 {
		return nil, cannot("level %s: the event holds no patch", ev.Level)
	}
	if old == nil {
		return nil, cannot("a refused patch of an object the log does not hold before it")
	}
	patched, err := applyPatch(old, ev.RequestObject.Raw)
	if err != nil {
		return nil, cannot("a refused patch that does not apply to the object before it: %v", err)
	}
	return patched, nil
}

// applyPatch applies a patch as the apiserver would: a JSON array is a
// JSON Patch; an object, a strategic merge patch for a built-in kind (what
// kubectl sends) and a JSON merge patch for any other. The log does not
// record the content type, so a server-side apply is taken as a merge.
func applyPatch(old, patch []byte) ([]byte, error) {
	if bytes.HasPrefix(bytes.TrimSpace(patch), []byte("[")) {
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, err
		}
		return p.Apply(old)
	}
	if typed, err := scheme.Scheme.New(kindOf(old)); err == nil {
		return strategicpatch.StrategicMergePatch(old, patch, typed)
	}
	return jsonpatch.MergePatch(old, patch)
}

// connectOptions is the options object of a CONNECT, read from the
// request's query as the apiserver's generated conversions read it.
func connectOptions(resource string, q url.Values) ([]byte, schema.GroupVersionKind, error) {
	var opts runtime.Object
	switch resource {
	case "pods/exec":
		opts = &corev1.PodExecOptions{Stdin: flag(q, "stdin"), Stdout: flag(q, "stdout"), Stderr: flag(q, "stderr"), TTY: flag(q, "tty"), Container: q.Get("container"), Command: q["command"]}
	case "pods/attach":
		opts = &corev1.PodAttachOptions{Stdin: flag(q, "stdin"), Stdout: flag(q, "stdout"), Stderr: flag(q, "stderr"), TTY: flag(q, "tty"), Container: q.Get("container")}
	case "pods/portforward":
		o := &corev1.PodPortForwardOptions{}
		for _, p := range q["ports"] {
			n, err := strconv.ParseInt(p, 10, 32)
			if err != nil {
				return nil, schema.GroupVersionKind{}, cannot("pods/portforward: port %q: %v", p, err)
			}
			o.Ports = append(o.Ports, int32(n))
		}
		opts = o
	case "pods/proxy":
		opts = &corev1.PodProxyOptions{Path: q.Get("path")}
	case "services/proxy":
		opts = &corev1.ServiceProxyOptions{Path: q.Get("path")}
	case "nodes/proxy":
		opts = &corev1.NodeProxyOptions{Path: q.Get("path")}
	}
	gvks, _, err := scheme.Scheme.ObjectKinds(opts)
	if err != nil {
		return nil, schema.GroupVersionKind{}, err
	}
	opts.GetObjectKind().SetGroupVersionKind(gvks[0])
	data, err := json.Marshal(opts)
	return data, gvks[0], err
}

// flag is a boolean query parameter as the apiserver reads one: absent is
// false, "false" and "0" are false, any other value true.
func flag(q url.Values, name string) bool {
	v, ok := q[name]
	if !ok || len(v) == 0 {
		return false
	}
	switch strings.ToLower(v[0]) {
	case "false", "0":
		return false
	}
	return true
}

// succeeded: the apiserver answered 2xx (a stored object, or a dry run's).
func succeeded(ev *auditv1.Event) bool {
	return ev.ResponseStatus != nil && ev.ResponseStatus.Code >= 200 && ev.ResponseStatus.Code < 300
}

// isObject: the response is the object itself, not a Status or another
// subresource's kind.
func isObject(ev *auditv1.Event) bool {
	if ev.ResponseObject == nil || len(ev.ResponseObject.Raw) == 0 {
		return false
	}
	sub := ev.ObjectRef.Subresource
	return (sub == "" || sub == "status") && kindOf(ev.ResponseObject.Raw).Kind != "Status"
}

func queryOf(uri string) string {
	_, q, _ := strings.Cut(uri, "?")
	return q
}

type objectHead struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name              string            `json:"name"`
		Namespace         string            `json:"namespace"`
		Labels            map[string]string `json:"labels"`
		DeletionTimestamp *metav1.Time      `json:"deletionTimestamp"`
	} `json:"metadata"`
}

func head(data []byte) objectHead {
	var h objectHead
	_ = json.Unmarshal(data, &h)
	return h
}

func kindOf(data []byte) schema.GroupVersionKind {
	h := head(data)
	return schema.FromAPIVersionAndKind(h.APIVersion, h.Kind)
}

func queryValues(uri string) url.Values {
	v, _ := url.ParseQuery(queryOf(uri))
	return v
}
