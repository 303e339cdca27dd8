package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/report"
)

type checkOptions struct {
	config    string
	files     []string
	operation string
	old       []string
	namespaceFlags
	user             string
	groups           []string
	report           reportOptions
	showPatches      bool
	namespace        string
	registry         registryFlags
	noFastPath       bool
	defaultNamespace string
	params           []string
	references       []string
	crds             []string
	strictKinds      bool
}

func newCheckCommand() *cobra.Command {
	o := checkOptions{}
	cmd := &cobra.Command{
		Use:   "check -f MANIFESTS... [-c POLICIES]",
		Short: "Evaluate manifests against policies offline, with the server's engine",
		Long: "Sends each manifest through the policies as the apiserver would: injection first, then\n" +
			"validation of the result. Exit status: 0 nothing denied, 1 something denied, 2 usage or policy error.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", policyFlagHelp)
	f.StringArrayVarP(&o.files, "filename", "f", nil, "manifest file, directory or - for stdin (repeatable)")
	f.StringVar(&o.operation, "operation", "CREATE", "CREATE, UPDATE or DELETE")
	f.StringArrayVar(&o.old, "old", nil, "previous versions of the manifests, for UPDATE (repeatable)")
	o.namespaceFlags.addFlags(f)
	f.StringVar(&o.user, "user", "", "request.userInfo.username")
	f.StringSliceVar(&o.groups, "groups", nil, "request.userInfo.groups")
	o.report.addFlags(f, "a resource")
	f.BoolVar(&o.showPatches, "show-patches", false, "print what mutation would change, as a unified diff")
	f.StringVar(&o.namespace, "namespace", "", "tollgate's own namespace, exempt like the system namespaces")
	addFastPathFlag(f, &o.noFastPath)
	addRegistryFlags(f, &o.registry)
	f.StringVar(&o.defaultNamespace, "default-namespace", "default", "namespace of namespaced manifests that name none")
	f.StringArrayVar(&o.params, "params", nil, paramsFlagHelp)
	f.StringArrayVar(&o.references, "references", nil, referencesFlagHelp)
	f.StringArrayVar(&o.crds, "crd", nil, "file or directory of CustomResourceDefinitions naming the resource and scope of custom kinds (repeatable)")
	f.BoolVar(&o.strictKinds, "strict-kinds", false, "refuse kinds that are neither built in nor defined by a CustomResourceDefinition, instead of guessing their resource")
	return cmd
}

func noArgs(cmd *cobra.Command, args []string) error {
	if err := cobra.NoArgs(cmd, args); err != nil {
		return usageError(err)
	}
	return nil
}

func (o *checkOptions) run(cmd *cobra.Command) error {
	if len(o.files) == 0 {
		return usageError(errors.New("give manifests with -f"))
	}
	op := admission.Operation(strings.ToUpper(o.operation))
	if op != admission.Create && op != admission.Update && op != admission.Delete {
		return usageError(fmt.Errorf("--operation %q: want CREATE, UPDATE or DELETE", o.operation))
	}
	if err := o.report.validate(); err != nil {
		return err
	}
	set, err := policy.Load(o.config)
	if err != nil {
		return usageError(fmt.Errorf("load policies: %w", err))
	}
	namespaces, err := o.namespaceIndex(cmd.InOrStdin())
	if err != nil {
		return usageError(err)
	}
	objs, err := manifest.Read(o.files, cmd.InOrStdin())
	if err != nil {
		return usageError(err)
	}
	var old []*manifest.Object
	if len(o.old) > 0 {
		if old, err = manifest.Read(o.old, cmd.InOrStdin()); err != nil {
			return usageError(err)
		}
	}
	kinds, err := loadKinds(o.crds, o.strictKinds)
	if err != nil {
		return usageError(err)
	}
	ext, err := offline.ExternalFor(cmd.Context(), set, offline.Input{
		ParamPaths: o.params, Manifests: objs, Kinds: kinds, DefaultNamespace: o.defaultNamespace, ReferencePaths: o.references,
	})
	if err != nil {
		return usageError(err)
	}
	images, err := o.registry.verifier()
	if err != nil {
		return usageError(err)
	}
	eng := engine.New(set, engine.Options{OwnNamespace: o.namespace, Namespaces: namespaces.lookup, External: ext, NoCELFastPath: o.noFastPath, Images: images})
	findings := offline.Run(cmd.Context(), eng, objs, offline.Options{
		Operation:        op,
		Old:              old,
		User:             admission.UserInfo{Username: o.user, Groups: o.groups},
		DefaultNamespace: o.defaultNamespace,
		Kinds:            kinds,
	})
	warnInput(cmd.ErrOrStderr(), kinds, offline.Duplicates(objs, kinds, o.defaultNamespace))
	fieldWarnings(cmd.ErrOrStderr(), findings)
	out := cmd.OutOrStdout()
	if err := o.report.write(out, findings); err != nil {
		return err
	}
	if o.showPatches {
		if err := report.Patches(out, findings); err != nil {
			return err
		}
	}
	return findingsExit(findings)
}

// fieldWarnings prints, as kubectl prints the apiserver's, the warnings for
// fields a built-in kind does not have (they are dropped before admission).
func fieldWarnings(w io.Writer, findings []offline.Finding) {
	for _, f := range findings {
		for _, msg := range f.FieldWarnings {
			fmt.Fprintf(w, "Warning: %s %s: %s\n", f.Object.Where(), f.Object, msg)
		}
	}
}

// findingsExit is the exit status of check and audit: 2 when an object
// could not be decided, 1 when one is denied, else 0.
func findingsExit(findings []offline.Finding) error {
	for _, f := range findings {
		if f.Err != nil {
			return &exitError{code: exitUsage}
		}
	}
	for _, f := range findings {
		if !f.Allowed {
			return &exitError{code: exitDenied}
		}
	}
	return nil
}
