package leader

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/retry"
)

// newClient is a fake clientset whose Leases have the apiserver's optimistic
// concurrency: an update must carry the stored resourceVersion. (The fake's
// tracker accepts any; client-go's elector renews with the Lease it last saw,
// so without this a Lease taken by another identity would be overwritten.)
func newClient() *fake.Clientset {
	client := fake.NewClientset()
	gvr := coordinationv1.SchemeGroupVersion.WithResource("leases")
	var rv int
	client.PrependReactor("create", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
		l := action.(k8stesting.CreateAction).GetObject().(*coordinationv1.Lease).DeepCopy()
		rv++
		l.ResourceVersion = strconv.Itoa(rv)
		if err := client.Tracker().Create(gvr, l, l.Namespace); err != nil {
			return true, nil, err
		}
		return true, l, nil
	})
	client.PrependReactor("update", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
		l := action.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease).DeepCopy()
		stored, err := client.Tracker().Get(gvr, l.Namespace, l.Name)
		if err != nil {
			return true, nil, err
		}
		if stored.(*coordinationv1.Lease).ResourceVersion != l.ResourceVersion {
			return true, nil, apierrors.NewConflict(gvr.GroupResource(), l.Name, errors.New("the object has been modified"))
		}
		rv++
		l.ResourceVersion = strconv.Itoa(rv)
		if err := client.Tracker().Update(gvr, l, l.Namespace); err != nil {
			return true, nil, err
		}
		return true, l, nil
	})
	return client
}

// Short timings: a lost lease is noticed in RenewDeadline, an abandoned one
// taken over after LeaseDuration.
const (
	leaseDuration = 1 * time.Second
	renewDeadline = 500 * time.Millisecond
	retryPeriod   = 50 * time.Millisecond
	// bound is how long any expected event may take; events come much sooner.
	bound = 20 * time.Second
)

func config(client kubernetes.Interface, id string) Config {
	return Config{Client: client, Namespace: "tollgate-system", Name: "tollgate", Identity: id,
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

// candidate runs Run in a goroutine and reports what lead sees.
type candidate struct {
	id      string
	started chan context.Context // each time lead starts
	stopped chan struct{}        // each time lead returns
	leading atomic.Int32         // leads running now
	done    chan struct{}        // Run returned
	cancel  context.CancelFunc
	// hold, when set, is waited for by lead after its context ends.
	hold chan struct{}
}

func start(t *testing.T, client kubernetes.Interface, id string, hold chan struct{}) *candidate {
	t.Helper()
	return startWith(t, config(client, id), hold)
}

// startWith is start with the given configuration.
func startWith(t *testing.T, cfg Config, hold chan struct{}) *candidate {
	t.Helper()
	id := cfg.Identity
	ctx, cancel := context.WithCancel(context.Background())
	c := &candidate{id: id, started: make(chan context.Context, 10), stopped: make(chan struct{}, 10), done: make(chan struct{}), cancel: cancel, hold: hold}
	go func() {
		defer close(c.done)
		Run(ctx, cfg, func(ctx context.Context) {
			c.leading.Add(1)
			c.started <- ctx
			<-ctx.Done()
			if c.hold != nil {
				<-c.hold
			}
			c.leading.Add(-1)
			c.stopped <- struct{}{}
		})
	}()
	t.Cleanup(func() {
		cancel()
		if hold != nil {
			select {
			case <-hold:
			default:
				close(hold)
			}
		}
		<-c.done
	})
	return c
}

func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(bound):
		t.Fatalf("%s: not within %s", what, bound)
		panic("unreachable")
	}
}

func holder(t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	l, err := client.CoordinationV1().Leases("tollgate-system").Get(context.Background(), "tollgate", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// eventually polls cond until it holds, for at most bound.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, bound)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestAcquireAndRelease(t *testing.T) {
	client := newClient()
	a := start(t, client, "a", nil)
	leadCtx := within(t, a.started, "a leads")
	if got := holder(t, client); got != "a" {
		t.Errorf("Lease holder = %q, want a", got)
	}
	l, err := client.CoordinationV1().Leases("tollgate-system").Get(context.Background(), "tollgate", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.LeaseDurationSeconds == nil || *l.Spec.LeaseDurationSeconds != 1 {
		t.Errorf("leaseDurationSeconds = %v, want 1", l.Spec.LeaseDurationSeconds)
	}
	if leadCtx.Err() != nil {
		t.Fatal("lead's context ended while leading")
	}
	a.cancel()
	within(t, a.done, "Run returns after cancel")
	if leadCtx.Err() == nil {
		t.Error("lead's context did not end")
	}
	// ReleaseOnCancel: the Lease names no holder, so another replica need not
	// wait out the lease.
	if got := holder(t, client); got != "" {
		t.Errorf("Lease holder after cancel = %q, want none", got)
	}
}

// TestHandOver: while a leads, b waits; when a stops, b leads.
func TestHandOver(t *testing.T) {
	client := newClient()
	a := start(t, client, "a", nil)
	within(t, a.started, "a leads")
	b := start(t, client, "b", nil)
	// b has tried (and failed) to acquire once it has seen a as the holder;
	// give it several retry periods' worth of attempts, counted by the fake's
	// actions, then check it does not lead.
	eventually(t, "b tries the Lease", func() bool { return countGets(client) >= 10 })
	if b.leading.Load() != 0 {
		t.Fatal("b leads while a holds the Lease")
	}
	a.cancel()
	within(t, a.done, "a's Run returns")
	within(t, b.started, "b leads after a stops")
	if got := holder(t, client); got != "b" {
		t.Errorf("Lease holder = %q, want b", got)
	}
}

func countGets(client *fake.Clientset) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "leases" {
			n++
		}
	}
	return n
}

// TestLoseAndStandAgain: when another identity takes the Lease, lead's
// context ends within the renew deadline; the replica stands again and leads
// once the other's lease runs out.
func TestLoseAndStandAgain(t *testing.T) {
	client := newClient()
	a := start(t, client, "a", nil)
	first := within(t, a.started, "a leads")
	leases := client.CoordinationV1().Leases("tollgate-system")
	intruder := "intruder"
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		l, err := leases.Get(context.Background(), "tollgate", metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.NewMicroTime(time.Now())
		l.Spec.HolderIdentity, l.Spec.RenewTime, l.Spec.AcquireTime = &intruder, &now, &now
		_, err = leases.Update(context.Background(), l, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := holder(t, client); got != "intruder" {
		t.Fatalf("Lease holder = %q, want intruder", got)
	}
	within(t, a.stopped, "lead returns after the Lease is taken")
	if first.Err() == nil {
		t.Error("lead returned, its context did not end")
	}
	second := within(t, a.started, "a leads again after the intruder's lease expires")
	if second.Err() != nil {
		t.Error("the new lead's context has ended")
	}
	if got := holder(t, client); got != "a" {
		t.Errorf("Lease holder = %q, want a", got)
	}
}

// TestCancelWhileWaiting: Run returns when its context ends before it leads.
func TestCancelWhileWaiting(t *testing.T) {
	client := newClient()
	other := "other"
	now := metav1.NewMicroTime(time.Now())
	secs := int32(3600)
	if _, err := client.CoordinationV1().Leases("tollgate-system").Create(context.Background(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tollgate-system", Name: "tollgate"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &other, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a := start(t, client, "a", nil)
	eventually(t, "a tries the Lease", func() bool { return countGets(client) >= 3 })
	a.cancel()
	within(t, a.done, "Run returns after cancel")
	if len(a.started) != 0 {
		t.Error("a led while another held the Lease")
	}
	if got := holder(t, client); got != "other" {
		t.Errorf("Lease holder = %q, want other (untouched)", got)
	}
}

// TestCancelledBeforeStart: a context already ended runs nothing.
func TestCancelledBeforeStart(t *testing.T) {
	client := newClient()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, config(client, "a"), func(context.Context) { t.Error("lead ran") })
	}()
	within(t, done, "Run returns")
	if n := len(client.Actions()); n != 0 {
		t.Errorf("%d API calls with an ended context", n)
	}
}

// TestNoOverlapOnHandOver: the Lease is released only after lead has
// returned; until then no other replica may lead. (client-go's
// ReleaseOnCancel requires it: "you must ensure all code guarded by this
// lease has successfully completed prior to cancelling the context".)
//
// The Lease here lasts a minute: with the short timings, a renewal slower
// than renewDeadline on a loaded machine lets b take an expired Lease,
// which is the loss TestLoseAndStandAgain covers, not a hand-over.
func TestNoOverlapOnHandOver(t *testing.T) {
	client := newClient()
	slow := func(id string) Config {
		cfg := config(client, id)
		cfg.LeaseDuration, cfg.RenewDeadline = time.Minute, 40*time.Second
		return cfg
	}
	hold := make(chan struct{})
	a := startWith(t, slow("a"), hold)
	within(t, a.started, "a leads")
	b := startWith(t, slow("b"), nil)
	a.cancel()
	// a's lead is still finishing its work: the Lease must stay a's.
	gets := countGets(client)
	eventually(t, "b leads or tries the Lease after a's cancel", func() bool { return b.leading.Load() != 0 || countGets(client) >= gets+20 })
	if b.leading.Load() != 0 {
		t.Fatal("b leads while a's lead is still running")
	}
	if got := holder(t, client); got != "a" {
		t.Errorf("Lease holder while a's lead runs = %q, want a", got)
	}
	close(hold)
	within(t, a.done, "a's Run returns after its lead")
	if a.leading.Load() != 0 {
		t.Error("Run returned while its lead was running")
	}
	within(t, b.started, "b leads")
}

// TestDefaults: timings left zero get the documented defaults, in the
// order client-go requires (LeaseDuration > RenewDeadline > RetryPeriod).
func TestDefaults(t *testing.T) {
	for _, tc := range []struct {
		in, want Config
	}{
		{Config{}, Config{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 15 * time.Second / 7}},
		{Config{LeaseDuration: 30 * time.Second}, Config{LeaseDuration: 30 * time.Second, RenewDeadline: 20 * time.Second, RetryPeriod: 30 * time.Second / 7}},
		{Config{LeaseDuration: 30 * time.Second, RenewDeadline: 25 * time.Second, RetryPeriod: 5 * time.Second},
			Config{LeaseDuration: 30 * time.Second, RenewDeadline: 25 * time.Second, RetryPeriod: 5 * time.Second}},
	} {
		got := tc.in
		got.defaults()
		if got.LeaseDuration != tc.want.LeaseDuration || got.RenewDeadline != tc.want.RenewDeadline || got.RetryPeriod != tc.want.RetryPeriod {
			t.Errorf("defaults of %+v = %v/%v/%v, want %v/%v/%v", tc.in, got.LeaseDuration, got.RenewDeadline, got.RetryPeriod,
				tc.want.LeaseDuration, tc.want.RenewDeadline, tc.want.RetryPeriod)
		}
		if !(got.LeaseDuration > got.RenewDeadline && float64(got.RenewDeadline) > 1.2*float64(got.RetryPeriod)) {
			t.Errorf("defaults of %+v break client-go's rules: %v/%v/%v", tc.in, got.LeaseDuration, got.RenewDeadline, got.RetryPeriod)
		}
	}
}
