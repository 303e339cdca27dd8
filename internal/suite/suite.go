// Package suite runs policy test suites: files that name policies, resources
// and the result each policy must give each resource, checked offline with
// the same engine the server runs.
package suite

import (
	"context"

	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/defaulting"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/exception"
	"github.com/tollgate-dev/tollgate/internal/imageverify"
	"github.com/tollgate-dev/tollgate/internal/manifest"
	"github.com/tollgate-dev/tollgate/internal/namespaces"
	"github.com/tollgate-dev/tollgate/internal/offline"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// FileName is how a suite file is named: tollgate-test.yaml, or *.tollgate-test.yaml.
const FileName = "tollgate-test.yaml"

// Suite is one test file.
type Suite struct {
	// NoCELFastPath is the runner's, not the file's: every CEL program
	// decides on its tracked path (engine.Options.NoCELFastPath).
	NoCELFastPath bool `json:"-"`
	// Images verifies the images of verifyImages policies: the runner's.
	Images *imageverify.Verifier `json:"-"`

	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	// Policies are files or directories, relative to the suite; none means the embedded defaults.
	Policies []string `json:"policies,omitempty"`
	// Resources are manifest files or directories, relative to the suite.
	Resources []string `json:"resources"`
	// Params are files or directories, relative to the suite, of objects
	// policies read: params (ConfigMaps, custom resources and their CRDs)
	// and RBAC objects for the authorizer variable.
	Params []string `json:"params,omitempty"`
	// References are files or directories, relative to the suite, of the
	// objects the policies' spec.references read, besides the resources
	// (which are all candidates too).
	References []string `json:"references,omitempty"`
	// User and Groups are request.userInfo, the user the authorizer
	// variable checks.
	User   string   `json:"user,omitempty"`
	Groups []string `json:"groups,omitempty"`
	// Namespaces give the labels namespaceSelectors see.
	Namespaces map[string]map[string]string `json:"namespaces,omitempty"`
	// Operation is CREATE unless set.
	Operation string     `json:"operation,omitempty"`
	Results   []Expected `json:"results"`

	file string
	// uid is request.userInfo.uid (Kyverno's userinfo files give one).
	uid string
	// kyverno is set for a Kyverno suite (KyvernoFileName): its
	// expectations, read as Kyverno reads them.
	kyverno *kyvernoSuite
	// gator is set for a gator verify Suite (test.gatekeeper.sh): its
	// tests, run with Gatekeeper's evaluator.
	gator *gatorSuite
	// notes are the kinds Run guessed (manifest.Kinds.Notes) and the
	// resources given more than once.
	notes []string
}

// Notes are the warnings of the last Run: kinds neither built in nor
// defined by a CustomResourceDefinition among the resources or params,
// whose resource was guessed, and resources given more than once.
func (s *Suite) Notes() []string { return s.notes }

// Expected is the result a policy must give some resources.
type Expected struct {
	Policy string `json:"policy"`
	// Resources are [namespace/]name; without a namespace, "default" (or none
	// for cluster-scoped kinds).
	Resources []string       `json:"resources"`
	Result    engine.Outcome `json:"result"`
	// PatchedResource is a file holding the resource as mutation must leave it.
	PatchedResource string `json:"patchedResource,omitempty"`
}

// Check is one expectation for one resource, and how it went.
type Check struct {
	Suite, Policy, Resource string
	Want, Got               engine.Outcome
	Message                 string
	Problem                 string // empty when the check passed
}

// Find returns the suite files under dir: tollgate's, Kyverno's
// (KyvernoFileName), and gator's (GatorFileName: those whose apiVersion is
// test.gatekeeper.sh, as gator verify skips other YAML files).
func Find(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
		case d.Name() == FileName || strings.HasSuffix(d.Name(), "."+FileName) || d.Name() == KyvernoFileName:
			files = append(files, p)
		case d.Name() == GatorFileName:
			if isGator(apiVersionOf(p)) {
				files = append(files, p)
			}
		}
		return nil
	})
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("no %s, *.%s, %s or gator %s files under %s", FileName, FileName, KyvernoFileName, GatorFileName, dir)
	}
	return files, err
}

// apiVersionOf is a YAML file's apiVersion, "" when it has none or does not read.
func apiVersionOf(file string) string {
	data, err := manifest.ReadFile(file)
	if err != nil {
		return ""
	}
	js, err := gatorJSON(data)
	if err != nil {
		return ""
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
	}
	_ = json.Unmarshal(js, &head)
	return head.APIVersion
}

// Load reads one suite file strictly: tollgate's, Kyverno's (apiVersion
// cli.kyverno.io/v1alpha1), or gator's (test.gatekeeper.sh/v1alpha1).
func Load(file string) (*Suite, error) {
	if isGator(apiVersionOf(file)) {
		// Read as gator reads it: YAML 1.2, where yes and no are strings.
		data, err := manifest.ReadFile(file)
		if err != nil {
			return nil, err
		}
		js, err := gatorJSON(data)
		if err == nil {
			var s *Suite
			if s, err = loadGator(file, js); err == nil {
				return s, nil
			}
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	js, err := readJSON(file)
	if err != nil {
		return nil, err
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal(js, &head); err == nil && head.APIVersion == kyvernoAPIVersion {
		s, err := loadKyverno(file, js)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		return s, nil
	}
	var s Suite
	strict, err := sigsjson.UnmarshalStrict(js, &s, sigsjson.DisallowUnknownFields)
	if err == nil && len(strict) > 0 {
		err = errors.Join(strict...)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if s.APIVersion != policy.APIVersion || s.Kind != "Test" {
		return nil, fmt.Errorf("%s: want apiVersion %s and kind Test", file, policy.APIVersion)
	}
	if len(s.Resources) == 0 || len(s.Results) == 0 {
		return nil, fmt.Errorf("%s: a test needs resources and results", file)
	}
	for i, r := range s.Results {
		if !slices.Contains([]engine.Outcome{engine.Pass, engine.Fail, engine.Warn, engine.Skip, engine.Error}, r.Result) {
			return nil, fmt.Errorf("%s: results[%d].result %q: want pass, fail, warn, skip or error", file, i, r.Result)
		}
	}
	s.file = file
	return &s, nil
}

func (s *Suite) rel(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(s.file), p)
}

// Run evaluates the suite and returns one Check per expected result.
func (s *Suite) Run(ctx context.Context) ([]Check, error) {
	if s.gator != nil {
		return s.gator.checks(ctx, s.file), nil
	}
	set, err := s.loadPolicies()
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, r := range s.Resources {
		paths = append(paths, s.rel(r))
	}
	objs, err := manifest.Read(paths, nil)
	if err != nil {
		return nil, err
	}
	var params []string
	for _, p := range s.Params {
		params = append(params, s.rel(p))
	}
	var refs []string
	for _, p := range s.References {
		refs = append(refs, s.rel(p))
	}
	kinds := manifest.NewKinds()
	in := offline.Input{ParamPaths: params, Manifests: objs, Kinds: kinds, ReferencePaths: refs}
	if s.kyverno != nil {
		// Kyverno's test reads its context only, never the resources under test.
		in.References, in.OnlyReferences = s.kyverno.context, true
	}
	ext, err := offline.ExternalFor(ctx, set, in)
	if err != nil {
		return nil, err
	}
	eng := engine.New(set, engine.Options{Namespaces: func(ns string) (*corev1.Namespace, bool) {
		l, ok := s.Namespaces[ns]
		n := namespaces.Of(ns, l)
		if s.kyverno != nil {
			n.Annotations = s.kyverno.annotations[ns]
		}
		return n, ok
	}, External: ext, NoCELFastPath: s.NoCELFastPath, Images: s.Images})
	user := admission.UserInfo{Username: s.User, UID: s.uid, Groups: s.Groups}
	if s.kyverno != nil {
		checks := s.kyverno.checks(ctx, s.file, set, eng, objs, offline.Options{User: user, Kinds: kinds})
		s.notes = append(kinds.Notes(), offline.Duplicates(objs, kinds, "default")...)
		return checks, nil
	}
	findings := offline.Run(ctx, eng, objs, offline.Options{Operation: operation(s.Operation), User: user, Kinds: kinds})
	byResource := map[string][]*offline.Finding{}
	for i := range findings {
		f := &findings[i]
		key := resourceKey(f.Object, kinds)
		byResource[key] = append(byResource[key], f)
	}
	s.notes = append(kinds.Notes(), offline.Duplicates(objs, kinds, "default")...)
	var checks []Check
	for _, exp := range s.Results {
		for _, res := range exp.Resources {
			c := s.check(exp, res, byResource)
			if !slices.Contains(set.Names(), exp.Policy) {
				// Else a misspelt name passes as "skip".
				c.Problem = fmt.Sprintf("no policy %s among the test's policies", exp.Policy)
			}
			checks = append(checks, c)
		}
	}
	return checks, nil
}

func (s *Suite) loadPolicies() (*policy.Set, error) {
	if len(s.Policies) == 0 {
		return policy.LoadDefaults()
	}
	var all []*policy.Policy
	var exceptions []*exception.Exception
	for _, p := range s.Policies {
		set, err := policy.LoadPath(s.rel(p))
		if err != nil {
			return nil, err
		}
		all = append(all, set.Policies...)
		exceptions = append(exceptions, set.Exceptions...)
	}
	if s.kyverno != nil {
		exs, err := s.kyverno.loadExceptions(s.rel)
		if err != nil {
			return nil, err
		}
		exceptions = append(exceptions, exs...)
	}
	if err := exception.Unique(exceptions); err != nil {
		return nil, err
	}
	set, err := policy.NewSet(all)
	if err != nil {
		return nil, err
	}
	if err := set.SetExceptions(exceptions); err != nil {
		return nil, err
	}
	return set, nil
}

func (s *Suite) check(exp Expected, resource string, byResource map[string][]*offline.Finding) Check {
	c := Check{Suite: s.file, Policy: exp.Policy, Resource: resource, Want: exp.Result}
	key := resource
	if !strings.Contains(key, "/") {
		key = "default/" + key
	}
	found := byResource[key]
	if len(found) == 0 {
		found = byResource["/"+resource] // cluster-scoped
	}
	switch {
	case len(found) == 0:
		c.Problem = "no such resource among the test's resources"
		return c
	case len(found) > 1:
		c.Problem = fmt.Sprintf("%d resources are named %s", len(found), resource)
		return c
	}
	f := found[0]
	if f.Err != nil {
		c.Got, c.Message = engine.Error, f.Err.Error()
	} else {
		c.Got = engine.Skip
		c.Message = notApplicable
		for _, r := range f.Results {
			switch {
			case r.Policy != exp.Policy:
			case !r.Applies(): // a skip, never a pass: the policy was not run
				c.Got, c.Message = r.Outcome, notApplicable+": "+r.Message
			default:
				c.Got, c.Message = r.Outcome, r.Message
			}
		}
	}
	if c.Got != c.Want {
		c.Problem = fmt.Sprintf("want %s, got %s", c.Want, c.Got)
		return c
	}
	if exp.PatchedResource != "" {
		c.Problem = comparePatched(s.rel(exp.PatchedResource), f)
	}
	return c
}

// notApplicable is what a check says of a policy that did not apply to the
// resource: its expected result is skip.
const notApplicable = "the policy does not apply to this resource"

// comparePatched checks the mutated resource against the expected file, as data.
func comparePatched(file string, f *offline.Finding) string {
	data, err := manifest.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	wantJS, err := yaml.YAMLToJSON(data)
	if err != nil {
		return fmt.Sprintf("%s: %v", file, err)
	}
	// Both sides are compared as the apiserver holds them: defaulted.
	if wantJS, _, err = defaulting.Object(f.Object.GVK, wantJS); err != nil {
		return fmt.Sprintf("%s: %v", file, err)
	}
	got := f.Patched
	if got == nil {
		got = f.Defaulted
	}
	if got == nil {
		got = f.Object.JSON
	}
	var want, have any
	if err := json.Unmarshal(wantJS, &want); err != nil {
		return err.Error()
	}
	if err := json.Unmarshal(got, &have); err != nil {
		return err.Error()
	}
	if !reflect.DeepEqual(want, have) {
		gotYAML, _ := yaml.JSONToYAML(got)
		return fmt.Sprintf("the mutated resource differs from %s; it is:\n%s", file, gotYAML)
	}
	return ""
}

// resourceKey is namespace/name of a namespaced object (the namespace
// defaulted as for the request), /name of a cluster-scoped one, its scope
// mapped by kinds as for the request.
func resourceKey(o *manifest.Object, kinds *manifest.Kinds) string {
	if m, err := kinds.Resource(o.GVK, o.Namespace != ""); m.Namespaced || (err != nil && o.Namespace != "") {
		ns := o.Namespace
		if ns == "" {
			ns = "default"
		}
		return ns + "/" + o.Name
	}
	return "/" + o.Name
}
