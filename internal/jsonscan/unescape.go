package jsonscan

import (
	"bytes"

	"github.com/valyala/fastjson"
)

var parsers fastjson.ParserPool

// Unescape is the string a quoted JSON string (valid, as Pairs yields keys
// and Members values) holds, unescaped as fastjson unescapes it: what
// readers built on fastjson, such as the objects' CEL values, read. ""
// when it is not a string.
func Unescape(quoted []byte) string {
	if len(quoted) < 2 || quoted[0] != '"' {
		return ""
	}
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner)
	}
	p := parsers.Get()
	defer parsers.Put(p)
	v, err := p.ParseBytes(quoted)
	if err != nil {
		return ""
	}
	return string(v.GetStringBytes())
}
