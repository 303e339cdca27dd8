package replica

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// TestWarnAPIRegistered: a static replica reads, and only reads, the
// configurations of its name registered through the API, and warns when
// there are some.
func TestWarnAPIRegistered(t *testing.T) {
	tests := []struct {
		name     string
		existing []runtime.Object
		want     string // in the warning; empty: no warning
	}{
		{name: "none"},
		{name: "validating", existing: []runtime.Object{&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "tollgate"}}}, want: `"configurations":["ValidatingWebhookConfiguration/tollgate"]`},
		{name: "both", existing: []runtime.Object{
			&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "tollgate"}},
			&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "tollgate"}},
		}, want: `"configurations":["MutatingWebhookConfiguration/tollgate","ValidatingWebhookConfiguration/tollgate"]`},
		{name: "another name", existing: []runtime.Object{&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "other"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(tt.existing...)
			logs := &logBuffer{}
			r := &replica{cfg: Config{Cluster: ClusterConfig{WebhookName: "tollgate"}}, log: slog.New(slog.NewJSONHandler(logs, nil))}
			r.warnAPIRegistered(context.Background(), &cluster{client: client})
			warned := strings.Contains(logs.String(), "also registered through the API")
			if warned != (tt.want != "") || !strings.Contains(logs.String(), tt.want) {
				t.Errorf("logs %s\nwant warning with %q", logs, tt.want)
			}
			for _, a := range client.Actions() {
				if a.GetVerb() != "get" {
					t.Errorf("a static replica did %s %s", a.GetVerb(), a.GetResource().Resource)
				}
			}
		})
	}
}
