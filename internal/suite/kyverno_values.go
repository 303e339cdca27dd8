package suite

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/admission"
)

// kyvernoValues is Kyverno's ValuesSpec (a Test's values, or a Values file
// named by its variables), every field Kyverno knows.
type kyvernoValues struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	GlobalValues    map[string]any    `json:"globalValues"`
	Policies        []struct {
		Name      string `json:"name"`
		Resources []struct {
			Name   string         `json:"name"`
			Values map[string]any `json:"values"`
		} `json:"resources"`
		Rules any `json:"rules"`
	} `json:"policies"`
	NamespaceSelectors []struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"namespaceSelector"`
	// Namespaces are Namespace objects; tollgate reads their labels and annotations.
	Namespaces []struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ObjectMeta `json:"metadata"`
		Spec            any               `json:"spec"`
		Status          any               `json:"status"`
	} `json:"namespaces"`
	Subresources any `json:"subresources"`
}

// operationValue is the one Kyverno value tollgate honours: the request's
// operation, per policy and resource or global.
const operationValue = "request.operation"

func readKyvernoValues(file string) (*kyvernoValues, error) {
	js, err := readJSON(file)
	if err != nil {
		return nil, err
	}
	// Kyverno reads a Values file leniently; tollgate refuses an unknown
	// field at the top, where a misspelt one would be lost.
	var v kyvernoValues
	if err := yaml.Unmarshal(js, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var top map[string]any
	if err := yaml.Unmarshal(js, &top); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for k := range top {
		switch k {
		case "apiVersion", "kind", "metadata", "globalValues", "policies", "namespaceSelector", "namespaces", "subresources":
		default:
			return nil, fmt.Errorf("%s: unknown field %q", file, k)
		}
	}
	if v.APIVersion != kyvernoAPIVersion || (v.Kind != "Values" && v.Kind != "Value") {
		return nil, fmt.Errorf("%s: want apiVersion %s and kind Values", file, kyvernoAPIVersion)
	}
	return &v, nil
}

// apply returns the namespaces' labels and adds the operations the values
// give (by policy/resource, and "" for the global one) and the
// namespaces' annotations, which namespaceObject has in Kyverno's test;
// every other value is refused, by name.
func (v *kyvernoValues) apply(ops map[string]admission.Operation, annotations map[string]map[string]string) (map[string]map[string]string, error) {
	if v.Subresources != nil {
		return nil, errors.New("subresources: not supported by tollgate test")
	}
	op := func(where string, values map[string]any, key string) error {
		names := make([]string, 0, len(values))
		for n := range values {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if n != operationValue {
				return fmt.Errorf("%s: %s: tollgate test sets no Kyverno variable but %s", where, n, operationValue)
			}
			s, _ := values[n].(string)
			if !validOperation(strings.ToUpper(s)) {
				return fmt.Errorf("%s: %s %v: want CREATE, UPDATE or DELETE", where, n, values[n])
			}
			ops[key] = admission.Operation(strings.ToUpper(s))
		}
		return nil
	}
	if err := op("globalValues", v.GlobalValues, ""); err != nil {
		return nil, err
	}
	for i, p := range v.Policies {
		if p.Rules != nil {
			return nil, fmt.Errorf("policies[%d].rules: not supported by tollgate test (values of ClusterPolicy rules)", i)
		}
		for j, r := range p.Resources {
			if err := op(fmt.Sprintf("policies[%d].resources[%d].values", i, j), r.Values, p.Name+"/"+r.Name); err != nil {
				return nil, err
			}
		}
	}
	namespaces := map[string]map[string]string{}
	for _, ns := range v.Namespaces {
		namespaces[ns.Metadata.Name] = ns.Metadata.Labels
		if len(ns.Metadata.Annotations) > 0 {
			annotations[ns.Metadata.Name] = ns.Metadata.Annotations
		}
	}
	for _, ns := range v.NamespaceSelectors {
		namespaces[ns.Name] = ns.Labels
	}
	return namespaces, nil
}

// kyvernoUserInfo is Kyverno's UserInfo file (a kyverno.io RequestInfo).
type kyvernoUserInfo struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Roles           []string          `json:"roles"`
	ClusterRoles    []string          `json:"clusterRoles"`
	UserInfo        struct {
		Username string              `json:"username"`
		UID      string              `json:"uid"`
		Groups   []string            `json:"groups"`
		Extra    map[string][]string `json:"extra"`
	} `json:"userInfo"`
}

// readKyvernoUserInfo reads the user of the requests; roles, clusterRoles
// and extra, which tollgate cannot give a request, are refused.
func readKyvernoUserInfo(file string) (user, uid string, groups []string, err error) {
	var u kyvernoUserInfo
	if err := readStrict(file, &u); err != nil {
		return "", "", nil, err
	}
	switch {
	case u.APIVersion != kyvernoAPIVersion || u.Kind != "UserInfo":
		return "", "", nil, fmt.Errorf("%s: want apiVersion %s and kind UserInfo", file, kyvernoAPIVersion)
	case len(u.Roles) > 0 || len(u.ClusterRoles) > 0:
		return "", "", nil, fmt.Errorf("%s: roles and clusterRoles: not supported by tollgate test (give RBAC objects in paramResources for the authorizer)", file)
	case len(u.UserInfo.Extra) > 0:
		return "", "", nil, fmt.Errorf("%s: userInfo.extra: not supported by tollgate test", file)
	}
	return u.UserInfo.Username, u.UserInfo.UID, u.UserInfo.Groups, nil
}
