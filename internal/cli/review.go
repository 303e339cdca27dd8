package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/jsonscan"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/webhook"
)

type reviewOptions struct {
	config     string
	file       string
	path       string
	namespace  string
	registry   registryFlags
	noFastPath bool
	params     []string
	references []string
}

func newReviewCommand() *cobra.Command {
	o := reviewOptions{}
	cmd := &cobra.Command{
		Use:   "review -f REVIEW.json [--path /validate/GROUP]",
		Short: "Answer an AdmissionReview file exactly as the server would",
		Long: "Prints the AdmissionReview the server would send back to the apiserver for the request in\n" +
			"the file, on the given review path. Exit status: 0 allowed, 1 denied, 2 a body the server refuses.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", policyFlagHelp)
	f.StringVarP(&o.file, "filename", "f", "", "AdmissionReview JSON file (gzipped if it ends in .gz), or - for stdin")
	f.StringVar(&o.path, "path", "", "review path, e.g. /validate/require-environment (default: the only one)")
	f.StringVar(&o.namespace, "namespace", os.Getenv("POD_NAMESPACE"), "tollgate's own namespace, as for serve")
	addFastPathFlag(f, &o.noFastPath)
	addRegistryFlags(f, &o.registry)
	f.StringArrayVar(&o.params, "params", nil, paramsFlagHelp)
	f.StringArrayVar(&o.references, "references", nil, referencesFlagHelp)
	return cmd
}

func (o *reviewOptions) run(cmd *cobra.Command) error {
	if o.file == "" {
		return usageError(errors.New("give the review with -f"))
	}
	var body []byte
	var err error
	name := o.file
	if o.file == "-" {
		body, err = io.ReadAll(cmd.InOrStdin())
		name = "stdin"
	} else {
		body, err = manifest.ReadFile(o.file)
	}
	if err != nil {
		return usageError(err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return usageError(fmt.Errorf("%s: empty: no AdmissionReview in it", name))
	}
	if err := notRepeating(body); err != nil {
		return usageError(err)
	}
	set, err := policy.Load(o.config)
	if err != nil {
		return usageError(fmt.Errorf("load policies: %w", err))
	}
	group, err := pickGroup(set, o.path)
	if err != nil {
		return usageError(err)
	}
	ext, err := offline.ExternalFor(cmd.Context(), set, offline.Input{ParamPaths: o.params, ReferencePaths: o.references})
	if err != nil {
		return usageError(err)
	}
	images, err := o.registry.verifier()
	if err != nil {
		return usageError(err)
	}
	eng := engine.New(set, engine.Options{OwnNamespace: o.namespace, External: ext, NoCELFastPath: o.noFastPath, Images: images})
	quiet := slog.New(slog.DiscardHandler)
	reply := webhook.Respond(cmd.Context(), eng.Handler(group), body, quiet)
	if reply.Status != http.StatusOK {
		return usageError(fmt.Errorf("the server answers HTTP %d: %s", reply.Status, reply.Body))
	}
	if _, err := cmd.OutOrStdout().Write(reply.Body); err != nil {
		return err
	}
	if !reply.Response.Allowed {
		return &exitError{code: exitDenied}
	}
	return nil
}

func pickGroup(set *policy.Set, path string) (*policy.Group, error) {
	var paths []string
	for _, g := range set.Groups {
		if g.Path() == path || (path == "" && len(set.Groups) == 1) {
			return g, nil
		}
		paths = append(paths, g.Path())
		// A binding's webhook path answers as the server does there: the
		// apiserver has applied the binding's selectors.
		for _, w := range g.BindingWebhooks {
			if w.Group.Path() == path {
				return w.Group, nil
			}
			paths = append(paths, w.Group.Path())
		}
	}
	if path == "" {
		return nil, fmt.Errorf("the policies serve several paths; choose one with --path: %s", strings.Join(paths, ", "))
	}
	return nil, fmt.Errorf("no review path %s; the policies serve %s", path, strings.Join(paths, ", "))
}

// notRepeating refuses a review in which an object repeats a name: the
// apiserver never sends one (the server trusts that, at no cost), but a
// review written by hand may hold one, and tollgate's readers take the
// first of a repeated name where JSON Patch takes the last. Invalid JSON is
// left to the server's own answer.
func notRepeating(body []byte) error {
	doc, err := jsonscan.ValidIndexedBelow(body, nil, 2)
	if err != nil {
		return nil
	}
	if name, at, found := doc.RepeatedKey(); found {
		return fmt.Errorf("the review repeats the name %q in one object (the second at byte %d); the apiserver never sends that, and its strict field validation refuses it", name, at)
	}
	return nil
}
