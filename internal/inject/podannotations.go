package inject

import (
	"fmt"

	"github.com/valyala/fastjson"

	"github.com/tollgate-dev/tollgate/internal/jsonscan"
)

// Annotations is what injection reads of a Pod's metadata.annotations.
type Annotations struct {
	// Any tells whether the Pod has an annotation: a patch then adds to
	// the map instead of creating it.
	Any bool
	// Status and OptOut are the values of StatusAnnotation and
	// OptOutAnnotation, "" when absent.
	Status, OptOut string
}

var parsers fastjson.ParserPool

// readAnnotations reads metadata.annotations, which must be strings; raw
// may run on past their value. The values are not parsed, only the two
// injection reads (the last of a repeated name, unescaped as fastjson
// does); kubectl's long last-applied-configuration is skipped over. Any
// other shape is read by annotationsError, for its error.
func (pod *Pod) readAnnotations(raw []byte) error {
	switch jsonscan.TypeOf(raw) {
	case fastjson.TypeNull:
		return nil
	case fastjson.TypeObject:
	default:
		return annotationsError(raw)
	}
	a := &pod.Annotations
	for k, v := range jsonscan.Pairs(raw) {
		if jsonscan.TypeOf(v) != fastjson.TypeString {
			return annotationsError(raw)
		}
		a.Any = true
		switch {
		case jsonscan.KeyIs(k, StatusAnnotation):
			a.Status = jsonscan.Unescape(v)
		case jsonscan.KeyIs(k, OptOutAnnotation):
			a.OptOut = jsonscan.Unescape(v)
		}
	}
	return nil
}

// annotationsError says why annotations that are not an object of strings
// cannot be read: the whole value is parsed, so that the error is the
// parser's own, or names the first member that is not a string.
func annotationsError(raw []byte) error {
	p := parsers.Get()
	defer parsers.Put(p)
	v, err := p.ParseBytes(jsonscan.Value(raw))
	if err != nil {
		return fmt.Errorf("cannot read pod: %w", err)
	}
	o, err := v.Object()
	if err != nil {
		return fmt.Errorf("cannot read pod: metadata.annotations must be an object")
	}
	o.Visit(func(k []byte, val *fastjson.Value) {
		if _, e := val.StringBytes(); e != nil && err == nil {
			err = fmt.Errorf("cannot read pod: metadata.annotations.%s must be a string", k)
		}
	})
	if err == nil { // every value a string: readAnnotations reads these
		err = fmt.Errorf("cannot read pod: metadata.annotations: unexpected shape")
	}
	return err
}
