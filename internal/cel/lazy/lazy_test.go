package lazy

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tollgate-dev/tollgate/internal/admission"
	lazytypes "github.com/tollgate-dev/tollgate/internal/cel/lazy/types"
	"github.com/tollgate-dev/tollgate/internal/jsonscan"
)

// lazyDocs are the documents the lazy values are compared on: the edge
// cases of testdata and the captured Pod reviews' objects.
func lazyDocs(t testing.TB) map[string][]byte {
	t.Helper()
	docs := map[string][]byte{}
	files, _ := filepath.Glob("testdata/*.json")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.Base(f)] = data
	}
	for _, f := range []string{"review-pod-create.json", "review-pod-update.json"} {
		body, err := os.ReadFile(filepath.Join("../../admission/testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		review, err := admission.Decode(body)
		if err != nil {
			t.Fatal(err)
		}
		docs[f+" object"] = review.Request.Object()
		if old := review.Request.OldObject(); old != nil {
			docs[f+" oldObject"] = old
		}
	}
	if len(docs) < 8 {
		t.Fatalf("only %d documents", len(docs))
	}
	return docs
}

// TestLazyValues: the CEL value read lazily from an object's JSON is
// today's value of it (ObjectFromJSON, then the values adapter) in every
// way the CEL runtime and libraries can observe.
func TestLazyValues(t *testing.T) {
	for name, doc := range lazyDocs(t) {
		t.Run(name, func(t *testing.T) {
			if err := jsonscan.Valid(doc); err != nil {
				t.Fatal(err)
			}
			compareLazy(t, doc)
		})
	}
}

// FuzzLazyValues: on any valid JSON, newDocument (Input.Check) refuses
// what ObjectFromJSON refuses, with its error, and on any object it reads,
// the lazy value is today's value.
func FuzzLazyValues(f *testing.F) {
	for _, doc := range lazyDocs(f) {
		if len(doc) <= maxFuzzDoc {
			f.Add(doc)
		}
	}
	f.Add([]byte(`[1]`))
	f.Add([]byte(`{"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		if len(doc) > maxFuzzDoc || jsonscan.Valid(doc) != nil {
			return // the captured Pods are TestLazyValues'
		}
		_, want := RuntimeObject(doc)
		if _, got := NewDocument(doc, jsonscan.Indexed{}); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("newDocument: %v, ObjectFromJSON: %v", got, want)
		}
		if want != nil || len(doc) == 0 || jsonscan.NewIndex(doc, "").Depth() > maxFuzzDepth {
			return
		}
		compareLazy(t, doc)
		checkSizes(t, doc)
	})
}

// maxFuzzDoc and maxFuzzDepth bound the documents compared by the fuzzer:
// comparing converts each level's whole subtree (time grows with size
// times depth), and instrumented code is slow. testdata/lazy/deep.json is
// deeper.
const maxFuzzDoc, maxFuzzDepth = 2048, 24

// compareLazy compares the lazy value of doc with today's.
func compareLazy(t *testing.T, doc []byte) {
	t.Helper()
	u, err := ObjectFromJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := NewValues().NativeToValue(u.Object)
	d, err := NewDocument(doc, jsonscan.Indexed{})
	if err != nil {
		t.Fatal(err)
	}
	got := NewValues().Object(d)
	if len(u.Object) > 0 {
		if !lazytypes.IsLazy(got) {
			t.Fatalf("got %T, want a lazy map", got)
		}
	}
	sameValue(t, "object", got, want)
}

// nativeTypes are the types the values are converted to.
var nativeTypes = []reflect.Type{
	reflect.TypeFor[any](), reflect.TypeFor[map[string]any](), reflect.TypeFor[[]any](),
	reflect.TypeFor[map[string]string](), reflect.TypeFor[[]string](), reflect.TypeFor[map[string]int64](),
	reflect.TypeFor[ref.Val](), reflect.TypeFor[traits.Mapper](), reflect.TypeFor[traits.Lister](),
	reflect.TypeFor[*structpb.Value](), reflect.TypeFor[*structpb.Struct](), reflect.TypeFor[*structpb.ListValue](),
	reflect.TypeFor[string](), reflect.TypeFor[int64](), reflect.TypeFor[float64](), reflect.TypeFor[bool](),
}

// sameValue requires got to be want to whatever reads it: type, equality
// both ways, the Go value, formatting, conversions, and for maps and
// lists their size, members, lookups, errors, iteration and folding.
func sameValue(t *testing.T, path string, got, want ref.Val) {
	t.Helper()
	if got.Type() != want.Type() {
		t.Fatalf("%s: type %v, want %v", path, got.Type(), want.Type())
	}
	if got.Equal(want) != types.True || want.Equal(got) != types.True {
		t.Errorf("%s: %v and %v are not equal", path, got, want)
	}
	if !reflect.DeepEqual(got.Value(), want.Value()) {
		t.Errorf("%s: Value %#v, want %#v", path, got.Value(), want.Value())
	}
	if g, w := types.Format(got), types.Format(want); g != w {
		t.Errorf("%s: Format %s, want %s", path, g, w)
	}
	if d, ok := want.(types.Double); ok && math.Float64bits(float64(d)) != math.Float64bits(float64(got.(types.Double))) {
		t.Errorf("%s: %v, want %v (bits)", path, got, want)
	}
	for _, ty := range nativeTypes {
		g, gerr := got.ConvertToNative(ty)
		w, werr := want.ConvertToNative(ty)
		if (gerr == nil) != (werr == nil) || gerr != nil && !container(want) && gerr.Error() != werr.Error() {
			t.Errorf("%s: ConvertToNative(%v) error %v, want %v", path, ty, gerr, werr)
			continue
		}
		if gerr != nil {
			continue
		}
		switch w := w.(type) {
		case ref.Val:
			if g, ok := g.(ref.Val); !ok || g.Equal(w) != types.True {
				t.Errorf("%s: ConvertToNative(%v) = %v, want %v", path, ty, g, w)
			} else if (g == got) != (w == want) {
				t.Errorf("%s: ConvertToNative(%v) is the value itself: %v, want %v", path, ty, g == got, w == want)
			}
		case proto.Message:
			if !proto.Equal(g.(proto.Message), w) {
				t.Errorf("%s: ConvertToNative(%v) = %v, want %v", path, ty, g, w)
			}
		default:
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%s: ConvertToNative(%v) = %#v, want %#v", path, ty, g, w)
			}
		}
	}
	if g, w := got.ConvertToType(got.Type()), want.ConvertToType(want.Type()); g != got || w != want {
		t.Errorf("%s: ConvertToType(its type) is not the value itself", path)
	}
	if g, w := got.ConvertToType(types.TypeType), want.ConvertToType(types.TypeType); g != w {
		t.Errorf("%s: ConvertToType(type) %v, want %v", path, g, w)
	}
	if g, w := got.ConvertToType(types.StringType), want.ConvertToType(types.StringType); fmt.Sprint(g) != fmt.Sprint(w) {
		t.Errorf("%s: ConvertToType(string) %v, want %v", path, g, w)
	}
	switch w := want.(type) {
	case traits.Mapper:
		sameMap(t, path, got.(traits.Mapper), w)
	case traits.Lister:
		sameList(t, path, got.(traits.Lister), w)
	}
}

func sameMap(t *testing.T, path string, got, want traits.Mapper) {
	t.Helper()
	if got.Size() != want.Size() {
		t.Fatalf("%s: size %v, want %v", path, got.Size(), want.Size())
	}
	if gz, wz := got.(traits.Zeroer).IsZeroValue(), want.(traits.Zeroer).IsZeroValue(); gz != wz {
		t.Errorf("%s: IsZeroValue %v, want %v", path, gz, wz)
	}
	keys := iterated(got.Iterator())
	if w := iterated(want.Iterator()); !reflect.DeepEqual(keys, w) {
		t.Fatalf("%s: keys %v, want %v", path, keys, w)
	}
	for _, k := range append(keys, "no-such-key", "") {
		key := types.String(k)
		if g, w := got.Contains(key), want.Contains(key); g != w {
			t.Errorf("%s: Contains(%q) %v, want %v", path, k, g, w)
		}
		gv, gok := got.Find(key)
		wv, wok := want.Find(key)
		if gok != wok {
			t.Errorf("%s: Find(%q) found %v, want %v", path, k, gok, wok)
			continue
		}
		g, w := got.Get(key), want.Get(key)
		if !wok {
			if fmt.Sprint(g) != fmt.Sprint(w) {
				t.Errorf("%s: Get(%q) %v, want %v", path, k, g, w)
			}
			continue
		}
		sameEntry(t, fmt.Sprintf("%s Find(%q)", path, k), gv, wv)
		sameValue(t, fmt.Sprintf("%s[%q]", path, k), g, w)
	}
	for _, bad := range []ref.Val{types.Int(1), types.True} {
		if g, w := got.Contains(bad), want.Contains(bad); g != w {
			t.Errorf("%s: Contains(%v) %v, want %v", path, bad, g, w)
		}
		if g, w := got.Get(bad), want.Get(bad); fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("%s: Get(%v) %v, want %v", path, bad, g, w)
		}
	}
	g, w := folded(got.(traits.Foldable)), folded(want.(traits.Foldable))
	if len(g) != len(w) {
		t.Fatalf("%s: folded %d entries, want %d", path, len(g), len(w))
	}
	for k, wv := range w {
		gv, ok := g[k]
		if !ok {
			t.Errorf("%s: Fold misses %v", path, k)
			continue
		}
		sameEntry(t, fmt.Sprintf("%s fold[%v]", path, k), gv, wv)
	}
}

func sameList(t *testing.T, path string, got, want traits.Lister) {
	t.Helper()
	if got.Size() != want.Size() {
		t.Fatalf("%s: size %v, want %v", path, got.Size(), want.Size())
	}
	if gz, wz := got.(traits.Zeroer).IsZeroValue(), want.(traits.Zeroer).IsZeroValue(); gz != wz {
		t.Errorf("%s: IsZeroValue %v, want %v", path, gz, wz)
	}
	if g, w := fmt.Sprint(got), fmt.Sprint(want); g != w {
		t.Errorf("%s: String %s, want %s", path, g, w)
	}
	n := int(want.Size().(types.Int))
	it := got.Iterator()
	for i := range n {
		g, w := got.Get(types.Int(i)), want.Get(types.Int(i))
		sameValue(t, fmt.Sprintf("%s[%d]", path, i), g, w)
		sameEntry(t, fmt.Sprintf("%s iterated[%d]", path, i), it.Next(), w)
		if got.Contains(w) != types.True || want.Contains(g) != types.True {
			t.Errorf("%s: does not contain its element %d", path, i)
		}
	}
	for _, bad := range []ref.Val{types.Int(n), types.Int(-1), types.String("0"), types.Double(0.5)} {
		if g, w := got.Get(bad), want.Get(bad); fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("%s: Get(%v) %v, want %v", path, bad, g, w)
		}
	}
	g, w := folded(got.(traits.Foldable)), folded(want.(traits.Foldable))
	if len(g) != n || len(w) != n {
		t.Fatalf("%s: folded %d entries, want %d", path, len(g), n)
	}
	for i := range n {
		sameEntry(t, fmt.Sprintf("%s fold[%d]", path, i), g[types.Int(i)], w[types.Int(i)])
	}
	// Concatenation: with itself, either side of a list of today's (its
	// elements are the lists', compared above).
	for _, c := range []struct {
		name      string
		got, want ref.Val
	}{{" + itself", got.Add(got), want.Add(want)}, {" + today's", got.Add(want), want.Add(want)}, {" after today's", want.Add(got), want.Add(want)}} {
		sameEntry(t, path+c.name, c.got, c.want)
		if !reflect.DeepEqual(c.got.Value(), c.want.Value()) {
			t.Errorf("%s%s: Value %#v, want %#v", path, c.name, c.got.Value(), c.want.Value())
		}
		for _, ty := range nativeTypes[:3] {
			g, gerr := c.got.ConvertToNative(ty)
			w, werr := c.want.ConvertToNative(ty)
			if !reflect.DeepEqual(g, w) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Errorf("%s%s: ConvertToNative(%v) = %#v, %v, want %#v, %v", path, c.name, ty, g, gerr, w, werr)
			}
		}
	}
}

// sameEntry requires got to be want as far as a value handed out again
// (folded, concatenated) can differ: type, equality both ways, format.
func sameEntry(t *testing.T, path string, got, want ref.Val) {
	t.Helper()
	if got == nil || want == nil {
		t.Fatalf("%s: %v, want %v", path, got, want)
	}
	if got.Type() != want.Type() || got.Equal(want) != types.True || want.Equal(got) != types.True || types.Format(got) != types.Format(want) {
		t.Errorf("%s: %v, want %v", path, got, want)
	}
}

// iterated is the sorted keys an iterator yields.
func iterated(it traits.Iterator) []string {
	var keys []string
	for it.HasNext() == types.True {
		keys = append(keys, string(it.Next().(types.String)))
	}
	sort.Strings(keys)
	return keys
}

// folded is the entries a fold hands out, as the interpreter reads them
// (through an adapter).
func folded(f traits.Foldable) map[ref.Val]ref.Val {
	c := folder{}
	f.Fold(c)
	return c
}

type folder map[ref.Val]ref.Val

func (f folder) FoldEntry(k, v any) bool {
	f[types.DefaultTypeAdapter.NativeToValue(k)] = types.DefaultTypeAdapter.NativeToValue(v)
	return true
}

// container: a map or list, whose conversion fails at the first member
// that cannot be converted, in a map's random order, and says which.
func container(v ref.Val) bool {
	switch v.(type) {
	case traits.Mapper, traits.Lister:
		return true
	}
	return false
}
