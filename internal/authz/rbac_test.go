package authz_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/tollgate-dev/tollgate/internal/authz"
	"github.com/tollgate-dev/tollgate/internal/manifest"
)

func TestRBAC(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Parse("rbac.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	us := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		us[i] = &unstructured.Unstructured{}
		if err := us[i].UnmarshalJSON(o.JSON); err != nil {
			t.Fatalf("%s: %v", o.Where(), err)
		}
	}
	r, err := authz.NewRBAC(us)
	if err != nil {
		t.Fatal(err)
	}
	res := func(u *user.DefaultInfo, verb, group, resource, sub, ns, name string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: u, Verb: verb, APIGroup: group, Resource: resource, Subresource: sub,
			Namespace: ns, Name: name, ResourceRequest: true}
	}
	alice := &user.DefaultInfo{Name: "alice"}
	bob := &user.DefaultInfo{Name: "bob", Groups: []string{"readers"}}
	sa := &user.DefaultInfo{Name: "system:serviceaccount:team-a:deployer"}
	viewer := &user.DefaultInfo{Name: "carol", Groups: []string{"viewers"}}
	admin := &user.DefaultInfo{Name: "root", Groups: []string{"system:masters"}}
	for _, tc := range []struct {
		name       string
		attrs      authorizer.AttributesRecord
		want       authorizer.Decision
		wantReason string
	}{
		{"rolebinding to a clusterrole in its namespace", res(alice, "approve", "apps", "deployments", "", "team-a", "web"), authorizer.DecisionAllow,
			`RBAC: allowed by RoleBinding "approvers/team-a" of ClusterRole "approver" to User "alice"`},
		{"not in another namespace", res(alice, "approve", "apps", "deployments", "", "team-b", "web"), authorizer.DecisionNoOpinion, ""},
		{"not another verb", res(alice, "delete", "apps", "deployments", "", "team-a", "web"), authorizer.DecisionNoOpinion, ""},
		{"service account in the binding's namespace", res(sa, "approve", "apps", "deployments", "", "team-a", ""), authorizer.DecisionAllow,
			`RBAC: allowed by RoleBinding "approvers/team-a" of ClusterRole "approver" to ServiceAccount "deployer/team-a"`},
		{"group, resourceNames", res(bob, "get", "", "secrets", "", "team-a", "token"), authorizer.DecisionAllow,
			`RBAC: allowed by RoleBinding "one-secret/team-a" of Role "one-secret" to Group "readers"`},
		{"resourceNames never match a request without a name", res(bob, "get", "", "secrets", "", "team-a", ""), authorizer.DecisionNoOpinion, ""},
		{"other name", res(bob, "get", "", "secrets", "", "team-a", "other"), authorizer.DecisionNoOpinion, ""},
		{"aggregated clusterrole, */subresource", res(viewer, "get", "apps", "deployments", "scale", "x", "web"), authorizer.DecisionAllow,
			`RBAC: allowed by ClusterRoleBinding "viewers" of ClusterRole "aggregate" to Group "viewers"`},
		{"not the resource itself", res(viewer, "get", "apps", "deployments", "", "x", "web"), authorizer.DecisionNoOpinion, ""},
		{"system:masters", res(admin, "delete", "", "nodes", "", "", "n"), authorizer.DecisionAllow, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, reason, err := r.Authorize(context.Background(), tc.attrs)
			if err != nil || got != tc.want || reason != tc.wantReason {
				t.Errorf("got %v %q %v, want %v %q", got, reason, err, tc.want, tc.wantReason)
			}
		})
	}
}
