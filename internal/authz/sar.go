package authz

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	authorizationcel "k8s.io/apiserver/pkg/authorization/cel"
	"k8s.io/apiserver/plugin/pkg/authorizer/webhook"
	"k8s.io/apiserver/plugin/pkg/authorizer/webhook/metrics"
	"k8s.io/client-go/kubernetes"
)

// The apiserver's delegated authorization defaults: how long allowed and
// denied decisions are cached.
const (
	AllowTTL = 30 * time.Second
	DenyTTL  = 10 * time.Second
)

// retry is the apiserver's DefaultAuthWebhookRetryBackoff with fewer
// steps, so that retries fit in an admission webhook's timeout.
var retry = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 2}

// NewCluster returns an authorizer asking the cluster through
// SubjectAccessReviews, with the webhook authorizer's bounded LRU cache of
// decisions.
func NewCluster(client kubernetes.Interface) (authorizer.Authorizer, error) {
	a, err := webhook.NewFromInterface(client.AuthorizationV1(), AllowTTL, DenyTTL, retry,
		authorizer.DecisionNoOpinion, metrics.NoopAuthorizerMetrics{}, authorizationcel.NewDefaultCompiler())
	if err != nil {
		return nil, fmt.Errorf("authorizer: %w", err)
	}
	return a, nil
}
