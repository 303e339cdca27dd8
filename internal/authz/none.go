package authz

import (
	"context"
	"errors"

	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// ErrNone is every check's error when tollgate has nothing to authorize with.
var ErrNone = errors.New("tollgate has no authorizer: give cluster access (--kubeconfig), or Role, ClusterRole, RoleBinding and ClusterRoleBinding objects offline")

// None is the authorizer of a tollgate that has none: every decision is
// NoOpinion with ErrNone, which CEL shows as errored().
type None struct{}

// Authorize implements authorizer.Authorizer.
func (None) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionNoOpinion, "", ErrNone
}
