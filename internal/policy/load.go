package policy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/exception"
	"github.com/tollgate-dev/tollgate/internal/manifest"
)

// ErrNoPolicies is the error of a path that holds no policy: a mistyped
// directory must not pass as a set of nothing.
var ErrNoPolicies = errors.New("no policies found")

// ReadError is a path that could not be read: missing, unreadable, or not
// the gzip its name says. Commands refuse it as bad input, not as a
// problem of the policies.
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// Unreadable tells whether err says the policies' path could not be read
// or holds no policy, rather than that the policies have problems.
func Unreadable(err error) bool {
	var r *ReadError
	return errors.Is(err, ErrNoPolicies) || errors.As(err, &r)
}

// LoadPath reads a policy file, or every .yaml, .yml and .json file of a
// directory (not recursing, in name order), each of them gzipped too
// (.yaml.gz and so on), and verifies the whole set.
func LoadPath(path string) (*Set, error) {
	files, err := policyFiles(path)
	if err != nil {
		return nil, err
	}
	var all []*Policy
	var objects []*unstructured.Unstructured
	var exceptions []*exception.Exception
	var errs []error
	for _, f := range files {
		data, err := manifest.ReadFile(f)
		if err != nil {
			return nil, &ReadError{fmt.Errorf("read policy file: %w", err)}
		}
		ps, exs, objs, err := ParseAll(f, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		all = append(all, ps...)
		objects = append(objects, objs...)
		exceptions = append(exceptions, exs...)
	}
	if err := exception.Unique(exceptions); err != nil {
		errs = append(errs, err)
	}
	if len(all) == 0 && len(errs) == 0 {
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: %w: no .yaml, .yml or .json file in it (gzipped or not)", path, ErrNoPolicies)
		}
		return nil, fmt.Errorf("%s: %w: no document in it is a policy", path, ErrNoPolicies)
	}
	// Verify across the policies that did load too, so one run reports everything.
	set, err := NewSet(all)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	set.Objects = objects
	if err := set.SetExceptions(exceptions); err != nil {
		return nil, err
	}
	return set, nil
}

func policyFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, &ReadError{fmt.Errorf("policy config: %w", err)}
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, &ReadError{fmt.Errorf("policy config: %w", err)}
	}
	var files []string
	for _, e := range entries {
		// Kubernetes ConfigMap volumes hold dot-prefixed bookkeeping entries; skip them.
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") || !manifest.IsFile(e.Name()) {
			continue
		}
		files = append(files, filepath.Join(path, e.Name()))
	}
	return files, nil
}

// Parse reads the policy documents of one file, which must hold no
// PolicyException (ParseFile reads those too). Documents that are not
// policies (see ParseAll) are left out.
func Parse(file string, data []byte) ([]*Policy, error) {
	ps, exs, err := ParseFile(file, data)
	if err == nil && len(exs) > 0 {
		err = fmt.Errorf("%s: PolicyException %q: exceptions are read from policy files and directories only", exs[0].Source, exs[0].Name())
	}
	return ps, err
}

// ParseFile reads the policy and PolicyException documents of one file;
// other objects (see ParseAll) are left out.
func ParseFile(file string, data []byte) ([]*Policy, []*exception.Exception, error) {
	ps, exs, _, err := ParseAll(file, data)
	return ps, exs, err
}

// ParseAll reads the policy and PolicyException documents of one file, and
// returns the documents of other API groups than tollgate.dev,
// admissionregistration.k8s.io and policies.kyverno.io (a ConfigMap or custom resource used as
// params, RBAC objects): not policies of tollgate's, so neither policies nor
// errors, but objects policies may read. Each policy is verified on its
// own; verification across policies happens in NewSet. All problems are
// reported together, each with file, document and field path.
func ParseAll(file string, data []byte) ([]*Policy, []*exception.Exception, []*unstructured.Unstructured, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var policies []*Policy
	var exceptions []*exception.Exception
	var objects []*unstructured.Unstructured
	var errs []error
	for doc := 1; ; doc++ {
		raw, err := reader.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: document %d: %w", file, doc, err)
		}
		if isEmptyDocument(raw) {
			doc--
			continue
		}
		src := Source{File: file, Document: doc}
		if js, err := yaml.YAMLToJSONStrict(raw); err == nil {
			if decodeException := exceptionDecoder(js); decodeException != nil {
				e, errList := decodeException(js)
				for _, fe := range errList {
					errs = append(errs, fmt.Errorf("%s: %s %q: %w", src, exception.Kind, e.Name(), fe))
				}
				if len(errList) == 0 {
					e.Source = src.String()
					exceptions = append(exceptions, e)
				}
				continue
			}
			if o := foreign(js); o != nil {
				objects = append(objects, o)
				continue
			}
			if kind, decodeK8s := readerOf(js); decodeK8s != nil {
				p, errList := decodeK8s()
				for _, fe := range errList {
					name := metadataName(js)
					if p != nil {
						name = p.Name()
					}
					errs = append(errs, fmt.Errorf("%s: %s %q: %w", src, kind, name, fe))
				}
				if len(errList) == 0 {
					p.Source = src
					policies = append(policies, p)
				}
				continue
			}
		}
		p, err := decode(raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", src, err))
			continue
		}
		p.Source = src
		if errList := p.verify(); len(errList) > 0 {
			for _, fe := range errList {
				errs = append(errs, fmt.Errorf("%s: policy %q: %w", src, p.Name(), fe))
			}
			continue
		}
		if errList := p.compile(); len(errList) > 0 {
			for _, fe := range errList {
				errs = append(errs, fmt.Errorf("%s: policy %q: %w", src, p.Name(), fe))
			}
			continue
		}
		policies = append(policies, p)
	}
	if len(errs) > 0 {
		return nil, nil, nil, errors.Join(errs...)
	}
	return policies, exceptions, objects, nil
}

// exceptionDecoder is the decoder of a PolicyException document, tollgate's
// or Kyverno's; nil for any other document.
func exceptionDecoder(js []byte) func([]byte) (*exception.Exception, field.ErrorList) {
	switch {
	case exception.Is(js):
		return exception.Decode
	case exception.IsKyverno(js):
		return exception.DecodeKyverno
	}
	return nil
}

func (s Source) String() string {
	if s.Cluster {
		return "the cluster's API"
	}
	return fmt.Sprintf("%s: document %d", s.File, s.Document)
}

// decode turns one YAML document into a Policy, refusing unknown and
// duplicate fields; sigs.k8s.io/json names the field path of each.
func decode(doc []byte) (*Policy, error) {
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	var p Policy
	strict, err := sigsjson.UnmarshalStrict(js, &p, sigsjson.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("invalid policy: %w", err)
	}
	if len(strict) > 0 {
		msgs := make([]string, len(strict))
		for i, e := range strict {
			msgs[i] = e.Error()
		}
		return nil, fmt.Errorf("invalid policy: %s", strings.Join(msgs, "; "))
	}
	return &p, nil
}

func isEmptyDocument(doc []byte) bool {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' {
			return false
		}
	}
	return true
}

// metadataName is a document's metadata.name, for naming one that could
// not be decoded as its kind; "" when it has none.
func metadataName(js []byte) string {
	var m struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(js, &m)
	return m.Metadata.Name
}
