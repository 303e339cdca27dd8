package suite

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	sigsjson "sigs.k8s.io/json"

	"github.com/tollgate-dev/tollgate/internal/manifest"
)

// GatorFileName is how gatekeeper-library names the Suites of Gatekeeper's
// `gator verify`: tollgate test runs them as they are.
const GatorFileName = "suite.yaml"

// gatorGroup is the API group of gator's Suite (test.gatekeeper.sh/v1alpha1).
const gatorGroup = "test.gatekeeper.sh"

// gatorFile is a test.gatekeeper.sh Suite, every field gator knows (its
// pkg/gator/verify/suite.go).
type gatorFile struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Tests      []GatorTest       `json:"tests"`
	Skip       bool              `json:"skip"`
}

// GatorTest is one template and Constraint, and the cases reviewed with them.
type GatorTest struct {
	Name       string `json:"name"`
	Template   string `json:"template"`
	Constraint string `json:"constraint"`
	// Expansion is a file of ExpansionTemplates: not supported, each such
	// test is reported as an error.
	Expansion string       `json:"expansion"`
	Cases     []*GatorCase `json:"cases"`
	// Invalid: the Constraint must fail its template's schema.
	Invalid bool `json:"invalid"`
	Skip    bool `json:"skip"`
}

// GatorCase is one object reviewed, the inventory it is reviewed with, and
// what must be said of it.
type GatorCase struct {
	Name       string           `json:"name"`
	Object     string           `json:"object"`
	Inventory  []string         `json:"inventory"`
	Assertions []GatorAssertion `json:"assertions"`
	Skip       bool             `json:"skip"`
}

// GatorAssertion is gator's Assertion: how many violations (a count, yes
// or no; yes when unset) have a message matching a regular expression
// (every violation when unset).
type GatorAssertion struct {
	Violations *intstr.IntOrString `json:"violations,omitempty"`
	Message    *string             `json:"message,omitempty"`

	re *regexp.Regexp
}

// GatorTests are the tests of a gator Suite, its assertions compiled; nil
// for a Suite of another kind.
func (s *Suite) GatorTests() []GatorTest {
	if s.gator == nil {
		return nil
	}
	return s.gator.tests
}

// gatorSuite is what a gator Suite adds to a Suite: its tests.
type gatorSuite struct {
	tests []GatorTest
	skip  bool
}

// isGator tells whether a suite's apiVersion is gator's.
func isGator(apiVersion string) bool {
	return strings.HasPrefix(apiVersion, gatorGroup+"/")
}

// loadGator reads a gator Suite (its JSON, from gatorJSON) into a Suite,
// strictly, refusing what gator would refuse when it runs it: a test
// without template or constraint, a case without object or assertions,
// an assertion's count that is not a nonnegative integer, yes or no, a
// message that is not a regular expression. Skipped tests and cases are
// not checked, as gator does not read them.
func loadGator(file string, js []byte) (*Suite, error) {
	var gf gatorFile
	strict, err := sigsjson.UnmarshalStrict(js, &gf, sigsjson.DisallowUnknownFields)
	if err == nil && len(strict) > 0 {
		err = errors.Join(strict...)
	}
	if err != nil {
		return nil, err
	}
	if gf.Kind != "Suite" {
		return nil, fmt.Errorf("kind %q: want Suite", gf.Kind)
	}
	if !gf.Skip {
		for i := range gf.Tests {
			if err := gf.Tests[i].validate(); err != nil {
				return nil, fmt.Errorf("tests[%d] %q: %w", i, gf.Tests[i].Name, err)
			}
		}
	}
	s := &Suite{APIVersion: gf.APIVersion, Kind: gf.Kind, file: file}
	s.Metadata.Name = gf.Metadata.Name
	s.gator = &gatorSuite{tests: gf.Tests, skip: gf.Skip}
	return s, nil
}

func (t *GatorTest) validate() error {
	if t.Skip {
		return nil
	}
	if t.Template == "" || t.Constraint == "" {
		return errors.New("a test needs a template and a constraint")
	}
	for j, c := range t.Cases {
		if c.Skip {
			continue
		}
		if c.Object == "" || len(c.Assertions) == 0 {
			return fmt.Errorf("cases[%d] %q: a case needs an object and assertions", j, c.Name)
		}
		for k := range c.Assertions {
			if err := c.Assertions[k].compile(); err != nil {
				return fmt.Errorf("cases[%d] %q: assertions[%d]: %w", j, c.Name, k, err)
			}
		}
	}
	return nil
}

// compile checks the assertion's count and compiles its message.
func (a *GatorAssertion) compile() error {
	if v := a.Violations; v != nil {
		if v.Type == intstr.Int && v.IntVal < 0 || v.Type == intstr.String && v.StrVal != "yes" && v.StrVal != "no" {
			return fmt.Errorf("violations %s: want a nonnegative integer, yes or no", v.String())
		}
	}
	if a.Message != nil {
		re, err := regexp.Compile(*a.Message)
		if err != nil {
			return fmt.Errorf("message: %w", err)
		}
		a.re = re
	}
	return nil
}

// Check is gator's Assertion.Run: nil when as many violations as asserted
// match, else what was wrong, with every violation's message.
func (a *GatorAssertion) Check(messages []string) error {
	matching := 0
	for _, m := range messages {
		if a.re == nil || a.re.MatchString(m) {
			matching++
		}
	}
	want := "at least 1"
	ok := matching > 0
	switch v := a.Violations; {
	case v == nil || v.Type == intstr.String && v.StrVal == "yes":
	case v.Type == intstr.String: // no, as compile checked
		want, ok = "none", matching == 0
	default:
		want, ok = fmt.Sprintf("exactly %d", v.IntVal), matching == int(v.IntVal)
	}
	if ok {
		return nil
	}
	containing := ""
	if a.Message != nil {
		containing = fmt.Sprintf(" matching %q", *a.Message)
	}
	return fmt.Errorf("got %d violations%s but want %s: got messages %q", matching, containing, want, messages)
}

// gatorJSON reads a YAML document as gator reads it (go.yaml.in/yaml/v3,
// YAML 1.2: yes and no are strings) and gives its JSON.
func gatorJSON(doc []byte) ([]byte, error) {
	obj := map[string]any{}
	if err := yaml.Unmarshal(doc, &obj); err != nil {
		return nil, err
	}
	return json.Marshal(obj)
}

// readGatorObjects reads a file's objects as gator's reader does: split at
// each "\n---", documents without content skipped. A file with none is an
// error.
func readGatorObjects(file string) ([]*unstructured.Unstructured, error) {
	data, err := manifest.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for i, doc := range strings.Split(string(data), "\n---") {
		if !hasContent(doc) {
			continue
		}
		js, err := gatorJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, i+1, err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, i+1, err)
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no YAML objects", file)
	}
	return out, nil
}

// hasContent tells whether a document has a line that is neither blank nor a comment.
func hasContent(doc string) bool {
	for _, l := range strings.Split(doc, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return true
		}
	}
	return false
}

// readGatorObject reads a file that must hold exactly one object.
func readGatorObject(file string) (*unstructured.Unstructured, error) {
	objs, err := readGatorObjects(file)
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 {
		return nil, fmt.Errorf("%s defines %d objects, want one", file, len(objs))
	}
	return objs[0], nil
}
