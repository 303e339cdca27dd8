package admission

import (
	"fmt"

	"github.com/tollgate-dev/tollgate/internal/jsonscan"
	"github.com/valyala/fastjson"
)

// metas is what a request's objects' metadata read as, once.
type metas struct {
	object, oldObject *ObjectMeta
	// parts is where the object's metadata and spec are.
	parts Parts
	// err says why an object's metadata or spec could not be read.
	err error
}

// Parts are the JSON of an object's metadata and spec, as the read of its
// metadata found them: slices of the object, nil when absent. Readers of
// the object's other parts start from them instead of scanning the whole
// object again.
type Parts struct {
	Metadata, Spec []byte
	// Doc is the JSON they are slices of, indexed: reading their members
	// with it skips nested values without scanning them.
	Doc jsonscan.Indexed
}

// readMetas reads the metadata of objects set by SetObjects. Unlike a
// decoded review's, their bytes were not validated with the body, so each is
// checked to be JSON first (and indexed: the scans trust both).
func readMetas(object, oldObject []byte) *metas {
	p := parsers.Get()
	defer parsers.Put(p)
	doc, at, err := validObject(object)
	if err != nil {
		return &metas{err: err}
	}
	oldDoc, oldAt, err := validObject(oldObject)
	if err != nil {
		return &metas{err: fmt.Errorf("oldObject: %w", err)}
	}
	return metasOf(p, doc, at, oldDoc, oldAt)
}

// validObject validates and indexes an object's bytes; the zero span for
// none.
func validObject(raw []byte) (jsonscan.Indexed, jsonscan.Span, error) {
	if len(raw) == 0 {
		return jsonscan.Indexed{}, jsonscan.Span{}, nil
	}
	doc, err := jsonscan.ValidIndexed(raw, nil)
	if err != nil {
		return doc, jsonscan.Span{}, fmt.Errorf("cannot read object: %w", err)
	}
	return doc, doc.Root(), nil
}

// metasOf reads the metadata of both objects, each at its span of its
// validated, indexed JSON; an old object's error says it is the old
// object's.
func metasOf(p *fastjson.Parser, doc jsonscan.Indexed, at jsonscan.Span, oldDoc jsonscan.Indexed, oldAt jsonscan.Span) *metas {
	m := &metas{}
	m.object, m.parts, m.err = objectMeta(p, doc, at)
	var oldErr error
	m.oldObject, _, oldErr = objectMeta(p, oldDoc, oldAt)
	if m.err == nil && oldErr != nil {
		m.err = fmt.Errorf("oldObject: %w", oldErr)
	}
	return m
}

// objectMeta reads the metadata of an embedded object, and where its
// metadata and spec are: nil when absent or null. Only metadata and spec
// are parsed.
func objectMeta(p *fastjson.Parser, doc jsonscan.Indexed, at jsonscan.Span) (*ObjectMeta, Parts, error) {
	switch t := jsonscan.TypeOf(doc.Bytes(at)); t {
	case fastjson.TypeNull:
		return nil, Parts{}, nil
	case fastjson.TypeObject:
	default:
		return nil, Parts{}, fmt.Errorf("cannot read object: want a JSON object, got %s", t)
	}
	f := doc.Members(at, "metadata", "spec")
	parts := Parts{Metadata: doc.Bytes(f[0]), Spec: doc.Bytes(f[1]), Doc: doc}
	meta, err := metaOf(p, doc, f[0], parts.Spec)
	if err != nil {
		return nil, Parts{}, fmt.Errorf("cannot read object: %w", err)
	}
	return meta, parts, nil
}

// maxQuoteBytes bounds the part of a value an error message quotes.
const maxQuoteBytes = 43

// metaOf reads what every policy may need of any object, and checks its
// shape is one Kubernetes could have sent: its metadata is at metaAt of
// doc, and rawSpec is the JSON of its spec.
func metaOf(p *fastjson.Parser, doc jsonscan.Indexed, metaAt jsonscan.Span, rawSpec []byte) (*ObjectMeta, error) {
	m := &ObjectMeta{}
	switch t := jsonscan.TypeOf(doc.Bytes(metaAt)); t {
	case fastjson.TypeNull:
	case fastjson.TypeObject:
		f := doc.BytesOf(doc.Members(metaAt, "name", "generateName", "namespace", "labels"))
		for i, dst := range []*string{&m.Name, &m.GenerateName, &m.Namespace} {
			switch t := jsonscan.TypeOf(f[i]); t {
			case fastjson.TypeNull:
			case fastjson.TypeString:
				*dst = jsonscan.String(f[i])
			default:
				return nil, fmt.Errorf("metadata.%s must be a string, got %s", [...]string{"name", "generateName", "namespace"}[i], t)
			}
		}
		labels, err := stringMap(p, f[3])
		if err != nil {
			return nil, err
		}
		m.Labels = labels
	default:
		return nil, fmt.Errorf("metadata must be an object, got %s", t)
	}
	if t := jsonscan.TypeOf(rawSpec); t != fastjson.TypeNull && t != fastjson.TypeObject {
		return nil, fmt.Errorf("spec must be an object, got %s", Sanitize(string(jsonscan.Value(rawSpec)), maxQuoteBytes))
	}
	return m, nil
}

// stringMap reads metadata.labels: nil when absent or null, else an object
// of strings.
func stringMap(p *fastjson.Parser, raw []byte) (map[string]string, error) {
	if jsonscan.TypeOf(raw) == fastjson.TypeNull {
		return nil, nil
	}
	v := parse(p, raw)
	if v == nil {
		return nil, fmt.Errorf("metadata.labels must be an object of strings")
	}
	o, _ := v.Object()
	m := make(map[string]string, o.Len())
	var err error
	o.Visit(func(k []byte, val *fastjson.Value) {
		s, e := val.StringBytes()
		if e != nil && err == nil {
			err = fmt.Errorf("metadata.labels.%s must be a string, got %s", k, val.Type())
		}
		m[string(k)] = string(s)
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}
