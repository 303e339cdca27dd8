// Package offline runs manifests through the engine offline, as the apiserver
// would send them: every mutating group first, each patch applied in turn,
// then every validating group on the mutated object.
package offline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/defaulting"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/jsonpatch"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// Options say how manifests become admission requests.
type Options struct {
	// Operation is CREATE unless set.
	Operation admission.Operation
	// Old holds previous versions for UPDATE (and DELETE), found by kind,
	// namespace and name.
	Old []*manifest.Object
	// User is request.userInfo.
	User admission.UserInfo
	// DefaultNamespace is for namespaced objects that name none; "default" unless set.
	DefaultNamespace string
	// Workers evaluate manifests in parallel; GOMAXPROCS unless set.
	Workers int
	// Kinds maps kinds to resources; the built-in kinds and those of the
	// CustomResourceDefinitions among the manifests unless set.
	Kinds *manifest.Kinds
}

func (o *Options) defaults() {
	if o.Operation == "" {
		o.Operation = admission.Create
	}
	if o.DefaultNamespace == "" {
		o.DefaultNamespace = "default"
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
}

// Finding is what the policies made of one manifest.
type Finding struct {
	Object  *manifest.Object
	Results []engine.Result
	// Allowed is the apiserver's verdict; Code and Message explain a refusal.
	Allowed bool
	Code    int32
	Message string
	// Denials are the messages of each group that denied, in order: the
	// apiserver shows one of them (Message joins them all).
	Denials  []string
	Warnings []string
	// FieldWarnings are the apiserver's warnings for fields a built-in kind
	// does not have, dropped as the apiserver drops them.
	FieldWarnings []string
	// Defaulted is the object as admission first sees it: defaulted as the
	// apiserver defaults its kind (nil when Err is set; for DELETE, nil).
	Defaulted []byte
	// Patched is the object after every mutation, nil when nothing changed.
	Patched []byte
	// Err is set when the manifest could not be turned into a request.
	Err error
}

// Run checks every object, in parallel, keeping the input order.
func Run(ctx context.Context, eng *engine.Engine, objs []*manifest.Object, opts Options) []Finding {
	opts.defaults()
	if opts.Kinds == nil {
		opts.Kinds = manifest.NewKinds()
		// A broken definition leaves its kind to be guessed, said in its notes.
		_ = opts.Kinds.AddCRDs(objs)
	}
	old := map[string]*manifest.Object{}
	for _, o := range opts.Old {
		old[key(o, opts.DefaultNamespace)] = o
	}
	out := make([]Finding, len(objs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(opts.Workers, max(len(objs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = one(ctx, eng, objs[i], old, &opts)
			}
		}()
	}
	for i := range objs {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

func key(o *manifest.Object, defaultNS string) string {
	ns := o.Namespace
	if ns == "" {
		ns = defaultNS
	}
	return o.GVK.GroupKind().String() + "/" + ns + "/" + o.Name
}

// Request builds the admission request the apiserver would send for obj,
// its resource and scope mapped by kinds, its objects defaulted as the
// apiserver defaults them (old is of obj's kind); the warnings are the
// apiserver's for fields the kind does not have.
func Request(obj *manifest.Object, kinds *manifest.Kinds, op admission.Operation, old []byte, user admission.UserInfo, defaultNS string) (*admission.Request, []string, error) {
	m, err := kinds.Resource(obj.GVK, obj.Namespace != "")
	if err != nil {
		return nil, nil, err
	}
	objJSON := obj.JSON
	if m.Namespaced && obj.Namespace == "" {
		// The apiserver gives the object the request's namespace before
		// admission (EnsureObjectNamespaceMatchesRequestNamespace).
		if objJSON, err = WithNamespace(objJSON, defaultNS); err != nil {
			return nil, nil, err
		}
		if old != nil {
			if old, err = WithNamespace(old, defaultNS); err != nil {
				return nil, nil, fmt.Errorf("previous version: %w", err)
			}
		}
	}
	objJSON, warnings, err := defaulting.Object(obj.GVK, objJSON)
	if err != nil {
		return nil, nil, err
	}
	if old != nil {
		if old, _, err = defaulting.Object(obj.GVK, old); err != nil {
			return nil, nil, fmt.Errorf("previous version: %w", err)
		}
	}
	gvr := m.Resource
	ns := ""
	if m.Namespaced {
		ns = obj.Namespace
		if ns == "" {
			ns = defaultNS
		}
	}
	if obj.GVK.Group == "" && obj.GVK.Kind == "Namespace" {
		ns = obj.Name // the apiserver's request namespace of a Namespace is its name
	}
	req := &admission.Request{
		UID:       fmt.Sprintf("check-%s", obj.Where()),
		Kind:      obj.GVK,
		Resource:  gvr,
		Name:      obj.Name,
		Namespace: ns,
		Operation: op,
		UserInfo:  user,
	}
	if op == admission.Delete {
		req.SetObjects(nil, objJSON)
	} else {
		req.SetObjects(objJSON, old)
	}
	return req, warnings, nil
}

func one(ctx context.Context, eng *engine.Engine, obj *manifest.Object, old map[string]*manifest.Object, opts *Options) Finding {
	f := Finding{Object: obj, Allowed: true}
	var oldJSON []byte
	if opts.Operation == admission.Update {
		prev, ok := old[key(obj, opts.DefaultNamespace)]
		if !ok {
			f.Err = fmt.Errorf("%s: no previous version of %s among --old manifests", obj.Where(), obj)
			return f
		}
		oldJSON = prev.JSON
	}
	req, warnings, err := Request(obj, opts.Kinds, opts.Operation, oldJSON, opts.User, opts.DefaultNamespace)
	if err != nil {
		f.Err = fmt.Errorf("%s: %w", obj.Where(), err)
		return f
	}
	defaulted := req.Object()
	d := Decide(ctx, eng, req, obj.GVK)
	if d.Err != nil {
		d.Err = fmt.Errorf("%s: %w", obj.Where(), d.Err)
	}
	d.Object, d.FieldWarnings, d.Defaulted = obj, warnings, defaulted
	return d
}

// Decide answers req as the apiserver's admission chain would: every
// mutating group first, each patch applied and the result defaulted as the
// apiserver defaults gvk, then every validating group on the mutated
// object. The Finding has no Object, FieldWarnings or Defaulted.
func Decide(ctx context.Context, eng *engine.Engine, req *admission.Request, gvk schema.GroupVersionKind) Finding {
	f := Finding{Allowed: true}
	for _, action := range []policy.Action{policy.ActionMutate, policy.ActionValidate} {
		for _, g := range eng.Set().Groups {
			if g.Action != action {
				continue
			}
			ev := eng.Evaluate(ctx, g, req)
			f.Results = append(f.Results, ev.Results...)
			f.Warnings = append(f.Warnings, ev.Response.Warnings...)
			if !ev.Response.Allowed {
				f.Denials = append(f.Denials, ev.Response.Message)
				if f.Allowed {
					f.Allowed, f.Code, f.Message = false, ev.Response.Code, ev.Response.Message
				} else {
					f.Message += "; " + ev.Response.Message
				}
				continue
			}
			if len(ev.Response.Patch) == 0 {
				continue
			}
			patched, err := jsonpatch.Apply(req.Object(), ev.Response.Patch)
			if err == nil {
				// The apiserver decodes and defaults each webhook's result.
				patched, _, err = defaulting.Object(gvk, patched)
			}
			if err != nil {
				f.Err = fmt.Errorf("policy group %s: %w", g.ID, err)
				return f
			}
			req.SetObject(patched)
			f.Patched = patched
		}
	}
	return f
}

// withNamespace is the object with metadata.namespace set to ns.
func WithNamespace(obj []byte, ns string) ([]byte, error) {
	var o map[string]any
	d := json.NewDecoder(bytes.NewReader(obj))
	d.UseNumber() // numbers as written
	if err := d.Decode(&o); err != nil {
		return nil, err
	}
	meta, _ := o["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		o["metadata"] = meta
	}
	meta["namespace"] = ns
	return json.Marshal(o)
}
