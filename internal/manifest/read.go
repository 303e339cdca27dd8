// Package manifest reads Kubernetes manifests for offline checks: files,
// directories and stdin, multi-document YAML or JSON, and List kinds. Every
// problem names the file and the line where the document starts or the
// error is.
package manifest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// Object is one manifest.
type Object struct {
	File string
	Line int // where its document starts, 1-based
	// JSON is the object as the apiserver would receive it.
	JSON         []byte
	GVK          schema.GroupVersionKind
	Namespace    string
	Name         string
	GenerateName string
}

// String names the object for people: Kind namespace/name.
func (o *Object) String() string {
	name := o.Name
	if name == "" && o.GenerateName != "" {
		name = o.GenerateName + "*"
	}
	if o.Namespace != "" {
		name = o.Namespace + "/" + name
	}
	return o.GVK.Kind + " " + name
}

// Where is file:line of the object's document.
func (o *Object) Where() string { return fmt.Sprintf("%s:%d", o.File, o.Line) }

// Read reads every path: a file, a directory (recursively, .yaml, .yml and
// .json files, and each of them gzipped, .yaml.gz and so on), or "-" for
// stdin. A file ending in .gz is gunzipped. A path that yields no object
// is an error naming it: a mistyped directory must not pass as a check of
// nothing. Problems do not stop the reading; they are returned together,
// each with file and line.
func Read(paths []string, stdin io.Reader) ([]*Object, error) {
	var objs []*Object
	var errs []error
	for _, p := range paths {
		files, err := expand(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		before, failed := len(objs), len(errs)
		for _, f := range files {
			data, name, err := readFile(f, stdin)
			if err != nil {
				errs = append(errs, fmt.Errorf("read manifests: %w", err))
				continue
			}
			o, err := Parse(name, data)
			objs = append(objs, o...)
			if err != nil {
				errs = append(errs, err)
			}
		}
		if len(objs) == before && len(errs) == failed {
			errs = append(errs, noObjects(p, len(files)))
		}
	}
	return objs, errors.Join(errs...)
}

// noObjects is the error of a path that yielded no object.
func noObjects(path string, files int) error {
	switch {
	case path == "-":
		return errors.New("read manifests: stdin holds no object")
	case files == 0:
		return fmt.Errorf("read manifests: %s: no .yaml, .yml or .json file in it (gzipped or not)", path)
	}
	return fmt.Errorf("read manifests: %s: no object in it", path)
}

// readFile is a file's content ("-": stdin's), gunzipped when its name
// ends in .gz, and the name errors give it.
func readFile(f string, stdin io.Reader) (data []byte, name string, err error) {
	if f == "-" {
		data, err = io.ReadAll(stdin)
		return data, "<stdin>", err
	}
	data, err = ReadFile(f)
	return data, f, err
}

// ReadFile reads a file, gunzipped when its name ends in .gz, bounded so
// that a small file cannot expand without end. Every command that reads
// a user's file reads it here.
func ReadFile(f string) ([]byte, error) {
	data, err := os.ReadFile(f)
	if err != nil || !strings.EqualFold(filepath.Ext(f), ".gz") {
		return data, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: read as gzip, as its name ends in .gz: %w", f, err)
	}
	defer zr.Close()
	if data, err = io.ReadAll(io.LimitReader(zr, maxGunzipped+1)); err != nil {
		return nil, fmt.Errorf("%s: read as gzip, as its name ends in .gz: %w", f, err)
	}
	if len(data) > maxGunzipped {
		return nil, fmt.Errorf("%s: more than %d MiB gunzipped", f, maxGunzipped>>20)
	}
	return data, nil
}

// maxGunzipped bounds what one gzipped file may hold, so that a small
// file cannot expand without end.
const maxGunzipped = 1 << 30

// IsFile tells whether a file in a directory is read: .yaml, .yml or
// .json, or one of them gzipped.
func IsFile(name string) bool {
	name = strings.ToLower(name)
	name = strings.TrimSuffix(name, ".gz")
	switch filepath.Ext(name) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

func expand(path string) ([]string, error) {
	if path == "-" {
		return []string{"-"}, nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read manifests: %w", err)
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != path && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && IsFile(d.Name()) {
			files = append(files, p)
		}
		return nil
	})
	return files, err
}

// Parse reads the documents of one file.
func Parse(file string, data []byte) ([]*Object, error) {
	var objs []*Object
	var errs []error
	for _, doc := range split(data) {
		js, err := yaml.YAMLToJSONStrict(doc.data)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: invalid YAML: %s", file, doc.line+yamlLine(err)-1, trimLine(err)))
			continue
		}
		if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			continue // an empty document
		}
		got, err := objects(file, doc.line, js)
		objs = append(objs, got...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return objs, errors.Join(errs...)
}

type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name         string `json:"name"`
		GenerateName string `json:"generateName"`
		Namespace    string `json:"namespace"`
	} `json:"metadata"`
	Items []json.RawMessage `json:"items"`
}

// objects turns one document into objects: itself, or the items of a List.
func objects(file string, line int, js []byte) ([]*Object, error) {
	var h header
	if err := json.Unmarshal(js, &h); err != nil {
		return nil, fmt.Errorf("%s:%d: not a Kubernetes object: %v", file, line, err)
	}
	if h.APIVersion == "" || h.Kind == "" {
		return nil, fmt.Errorf("%s:%d: not a Kubernetes object: apiVersion and kind are required", file, line)
	}
	if strings.HasSuffix(h.Kind, "List") && h.Items != nil {
		var objs []*Object
		var errs []error
		for _, item := range h.Items {
			got, err := objects(file, line, item)
			objs = append(objs, got...)
			if err != nil {
				errs = append(errs, err)
			}
		}
		return objs, errors.Join(errs...)
	}
	gv, err := schema.ParseGroupVersion(h.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: apiVersion %q: %v", file, line, h.APIVersion, err)
	}
	if js, err = dropNullMembers(js); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", file, line, err)
	}
	return []*Object{{
		File: file, Line: line, JSON: js,
		GVK:          gv.WithKind(h.Kind),
		Namespace:    h.Metadata.Namespace,
		Name:         h.Metadata.Name,
		GenerateName: h.Metadata.GenerateName,
	}}, nil
}

type document struct {
	line int
	data []byte
}

// split cuts a YAML stream at "---" lines, remembering where each starts.
func split(data []byte) []document {
	var docs []document
	cur := document{line: 1}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if bytes.HasPrefix(line, []byte("---")) && (len(line) == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '#') {
			docs = append(docs, cur)
			cur = document{line: n + 1}
			continue
		}
		cur.data = append(cur.data, line...)
		cur.data = append(cur.data, '\n')
	}
	return append(docs, cur)
}

var (
	lineRE = regexp.MustCompile(`line (\d+):`)
	// lineTextRE is the line number with the space after it, so that the
	// message reads "yaml: did not find ...", not "yaml:  did not find ...".
	lineTextRE = regexp.MustCompile(`line \d+: ?`)
)

func yamlLine(err error) int {
	if m := lineRE.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 1
}

func trimLine(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	return lineTextRE.ReplaceAllString(msg, "")
}
