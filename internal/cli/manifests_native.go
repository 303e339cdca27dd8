package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/native"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/registration"
)

// runNative prints what the apiserver can enforce of the loaded policies
// by itself (native.Compile), and says on stderr which policies stay on
// the webhook and why.
func (o *manifestsOptions) runNative(stdout, stderr io.Writer) error {
	if o.static != "" {
		return usageError(errors.New("--native and --static: give one"))
	}
	set, err := policy.Load(o.config)
	if err != nil {
		return fmt.Errorf("load policies: %w", err)
	}
	excluded := engine.New(set, engine.Options{OwnNamespace: o.ownNamespace(), ExcludeNamespaces: o.excludeNamespaces}).Excluded()
	out, err := native.Compile(set, native.Options{ExcludedNamespaces: excluded})
	if err != nil {
		return err
	}
	for _, k := range out.Webhook {
		fmt.Fprintf(stderr, "%s stays on the webhook: %s\n", k.Policy, k.Reason)
	}
	fmt.Fprintf(stderr, "%d of %d policies are enforced by the objects printed\n", len(out.Native), len(out.Native)+len(out.Webhook))
	y, err := registration.YAML(out.Objects()...)
	if err != nil {
		return err
	}
	_, err = stdout.Write(y)
	return err
}
