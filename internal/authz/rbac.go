package authz

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/component-helpers/auth/rbac/validation"
)

// RBAC decides from RBAC objects as the kube-apiserver's authorizers do:
// members of system:masters are allowed everything; otherwise a request is
// allowed when a ClusterRoleBinding, or a RoleBinding of the request's
// namespace, binds a subject the user is to a role with a rule covering
// it (rules compared by k8s.io/component-helpers' RBAC rule coverage,
// aggregated ClusterRoles included). Otherwise NoOpinion, which the
// apiserver's chain turns into a denial.
type RBAC struct {
	roles               map[string]*rbacv1.Role
	clusterRoles        map[string]*rbacv1.ClusterRole
	roleBindings        []*rbacv1.RoleBinding
	clusterRoleBindings []*rbacv1.ClusterRoleBinding
}

// IsRBAC tells whether an object is one RBAC reads.
func IsRBAC(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	if gvk.Group != rbacv1.GroupName || gvk.Version != "v1" {
		return false
	}
	switch gvk.Kind {
	case "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding":
		return true
	}
	return false
}

// NewRBAC reads the RBAC objects among objects; others are ignored.
func NewRBAC(objects []*unstructured.Unstructured) (*RBAC, error) {
	r := &RBAC{roles: map[string]*rbacv1.Role{}, clusterRoles: map[string]*rbacv1.ClusterRole{}}
	for _, o := range objects {
		if !IsRBAC(o) {
			continue
		}
		var err error
		switch o.GetKind() {
		case "Role":
			v := &rbacv1.Role{}
			err = runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, v, true)
			r.roles[v.Namespace+"/"+v.Name] = v
		case "ClusterRole":
			v := &rbacv1.ClusterRole{}
			err = runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, v, true)
			r.clusterRoles[v.Name] = v
		case "RoleBinding":
			v := &rbacv1.RoleBinding{}
			err = runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, v, true)
			r.roleBindings = append(r.roleBindings, v)
		case "ClusterRoleBinding":
			v := &rbacv1.ClusterRoleBinding{}
			err = runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, v, true)
			r.clusterRoleBindings = append(r.clusterRoleBindings, v)
		}
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return r, nil
}

// Authorize implements authorizer.Authorizer.
func (r *RBAC) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	u := a.GetUser()
	if u == nil {
		return authorizer.DecisionNoOpinion, "", nil
	}
	for _, g := range u.GetGroups() {
		if g == user.SystemPrivilegedGroup {
			return authorizer.DecisionAllow, "", nil
		}
	}
	want := []rbacv1.PolicyRule{requestRule(a)}
	for _, b := range r.clusterRoleBindings {
		s := appliesTo(u, b.Subjects, "")
		if s == nil || b.RoleRef.Kind != "ClusterRole" {
			continue
		}
		if ok, _ := validation.Covers(r.clusterRoleRules(b.RoleRef.Name), want); ok {
			return authorizer.DecisionAllow, fmt.Sprintf("RBAC: allowed by ClusterRoleBinding %q of %s %q to %s", b.Name, b.RoleRef.Kind, b.RoleRef.Name, describe(s, "")), nil
		}
	}
	if ns := a.GetNamespace(); ns != "" {
		for _, b := range r.roleBindings {
			if b.Namespace != ns {
				continue
			}
			s := appliesTo(u, b.Subjects, ns)
			if s == nil {
				continue
			}
			var rules []rbacv1.PolicyRule
			switch b.RoleRef.Kind {
			case "Role":
				if role, ok := r.roles[ns+"/"+b.RoleRef.Name]; ok {
					rules = role.Rules
				}
			case "ClusterRole":
				rules = r.clusterRoleRules(b.RoleRef.Name)
			}
			if ok, _ := validation.Covers(rules, want); ok {
				return authorizer.DecisionAllow, fmt.Sprintf("RBAC: allowed by RoleBinding %q of %s %q to %s", b.Name+"/"+b.Namespace, b.RoleRef.Kind, b.RoleRef.Name, describe(s, ns)), nil
			}
		}
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// clusterRoleRules are a ClusterRole's rules, with those of the
// ClusterRoles its aggregationRule selects, as the aggregation controller
// would have written them.
func (r *RBAC) clusterRoleRules(name string) []rbacv1.PolicyRule {
	cr, ok := r.clusterRoles[name]
	if !ok {
		return nil
	}
	if cr.AggregationRule == nil {
		return cr.Rules
	}
	rules := append([]rbacv1.PolicyRule{}, cr.Rules...)
	for _, sel := range cr.AggregationRule.ClusterRoleSelectors {
		s, err := metav1.LabelSelectorAsSelector(&sel)
		if err != nil {
			continue
		}
		for _, other := range r.clusterRoles {
			if other != cr && s.Matches(labels.Set(other.Labels)) {
				rules = append(rules, other.Rules...)
			}
		}
	}
	return rules
}

// requestRule is the request as the one rule that must be covered.
func requestRule(a authorizer.Attributes) rbacv1.PolicyRule {
	if !a.IsResourceRequest() {
		return rbacv1.PolicyRule{Verbs: []string{a.GetVerb()}, NonResourceURLs: []string{a.GetPath()}}
	}
	resource := a.GetResource()
	if a.GetSubresource() != "" {
		resource += "/" + a.GetSubresource()
	}
	rule := rbacv1.PolicyRule{Verbs: []string{a.GetVerb()}, APIGroups: []string{a.GetAPIGroup()}, Resources: []string{resource}}
	if a.GetName() != "" {
		rule.ResourceNames = []string{a.GetName()}
	}
	return rule
}

// appliesTo returns the first subject the user is, as RBAC matches them.
func appliesTo(u user.Info, subjects []rbacv1.Subject, bindingNamespace string) *rbacv1.Subject {
	for i, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			if u.GetName() == s.Name {
				return &subjects[i]
			}
		case rbacv1.GroupKind:
			for _, g := range u.GetGroups() {
				if g == s.Name {
					return &subjects[i]
				}
			}
		case rbacv1.ServiceAccountKind:
			ns := s.Namespace
			if ns == "" {
				ns = bindingNamespace
			}
			if ns != "" && u.GetName() == "system:serviceaccount:"+ns+":"+s.Name {
				return &subjects[i]
			}
		}
	}
	return nil
}

func describe(s *rbacv1.Subject, bindingNamespace string) string {
	if s.Kind == rbacv1.ServiceAccountKind {
		ns := s.Namespace
		if ns == "" {
			ns = bindingNamespace
		}
		return fmt.Sprintf("%s %q", s.Kind, s.Name+"/"+ns)
	}
	return fmt.Sprintf("%s %q", s.Kind, s.Name)
}
