package registration

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// FieldManager owns, in server-side apply, the fields tollgate writes.
const FieldManager = "tollgate"

// Syncer keeps the webhook configurations equal to what the policies need:
// it applies them, and applies them again whenever they change or vanish,
// whatever the cause. Only the leader runs it.
type Syncer struct {
	Client kubernetes.Interface
	// Policies returns the current policy set (it changes on reload).
	Policies func() *policy.Set
	// Options are the registration options; CABundle is read from CABundle
	// on every apply when that is set.
	Options  Options
	CABundle func() []byte
	Log      *slog.Logger
	// Resync applies again at this interval even without events.
	Resync time.Duration
}

// Run applies until ctx ends: at once, on every change to either
// configuration, on every value sent to kick, and every Resync.
func (s *Syncer) Run(ctx context.Context, kick <-chan struct{}) {
	if s.Resync <= 0 {
		s.Resync = time.Minute
	}
	events := make(chan struct{}, 1)
	poke := func() {
		select {
		case events <- struct{}{}:
		default:
		}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(s.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", s.name()).String()
		}))
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke() },
		UpdateFunc: func(any, any) { poke() },
		DeleteFunc: func(any) { poke() },
	}
	_, _ = factory.Admissionregistration().V1().MutatingWebhookConfigurations().Informer().AddEventHandler(handler)
	_, _ = factory.Admissionregistration().V1().ValidatingWebhookConfigurations().Informer().AddEventHandler(handler)
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	var resync sync.WaitGroup
	defer resync.Wait()
	resync.Go(func() { wait.UntilWithContext(ctx, func(context.Context) { poke() }, s.Resync) }) // at once, then every Resync
	for {
		select {
		case <-ctx.Done():
			return
		case <-events:
		case <-kick:
		}
		if err := s.Apply(ctx); err != nil && ctx.Err() == nil {
			s.Log.Error("webhook configurations not applied", slog.Any("error", err))
		}
	}
}

func (s *Syncer) name() string {
	if s.Options.Name == "" {
		return "tollgate"
	}
	return s.Options.Name
}

// Apply server-side applies both configurations. A configuration no policy
// needs is deleted. An apply that changes nothing writes nothing, so the
// informer events it causes die out.
func (s *Syncer) Apply(ctx context.Context) error {
	opts := s.Options
	if s.CABundle != nil {
		opts.CABundle = s.CABundle()
	}
	mutating, validating, err := Build(s.Policies(), opts)
	if err != nil {
		return err
	}
	apply := metav1.PatchOptions{FieldManager: FieldManager, Force: ptr(true)}
	mw := s.Client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	vw := s.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	if mutating != nil {
		body, err := json.Marshal(mutating)
		if err != nil {
			return err
		}
		if _, err := mw.Patch(ctx, mutating.Name, types.ApplyPatchType, body, apply); err != nil {
			return fmt.Errorf("apply MutatingWebhookConfiguration %s: %w", mutating.Name, err)
		}
	} else if err := mw.Delete(ctx, s.name(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if validating != nil {
		body, err := json.Marshal(validating)
		if err != nil {
			return err
		}
		if _, err := vw.Patch(ctx, validating.Name, types.ApplyPatchType, body, apply); err != nil {
			return fmt.Errorf("apply ValidatingWebhookConfiguration %s: %w", validating.Name, err)
		}
	} else if err := vw.Delete(ctx, s.name(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// Uninstall deletes the configurations named name; missing ones are fine.
func Uninstall(ctx context.Context, client kubernetes.Interface, name string) ([]string, error) {
	var deleted []string
	if err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{}); err == nil {
		deleted = append(deleted, "MutatingWebhookConfiguration/"+name)
	} else if !apierrors.IsNotFound(err) {
		return deleted, err
	}
	if err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{}); err == nil {
		deleted = append(deleted, "ValidatingWebhookConfiguration/"+name)
	} else if !apierrors.IsNotFound(err) {
		return deleted, err
	}
	return deleted, nil
}

func ptr[T any](v T) *T { return &v }
