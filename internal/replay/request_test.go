package replay

import (
	"net/url"
	"testing"
)

// TestApplyPatch: a refused patch is applied as the apiserver would have:
// a strategic merge merges a Pod's containers by name, a merge patch of a
// custom resource replaces its list, a JSON patch applies its operations.
func TestApplyPatch(t *testing.T) {
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","image":"a:1"},{"name":"b","image":"b:1"}]}}`
	cr := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"items":[{"name":"a"},{"name":"b"}]}}`
	cases := []struct{ name, old, patch, want string }{
		{"strategic merge of a built-in kind", pod, `{"spec":{"containers":[{"name":"b","image":"b:2"}]}}`,
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"image":"a:1","name":"a"},{"image":"b:2","name":"b"}]}}`},
		{"merge patch of a custom resource", cr, `{"spec":{"items":[{"name":"c"}]}}`,
			`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"items":[{"name":"c"}]}}`},
		{"JSON patch", pod, `[{"op":"replace","path":"/spec/containers/0/image","value":"a:2"}]`,
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","image":"a:2"},{"name":"b","image":"b:1"}]}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := applyPatch([]byte(tc.old), []byte(tc.patch))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	if _, err := applyPatch([]byte(pod), []byte(`[{"op":"remove","path":"/spec/nothing"}]`)); err == nil {
		t.Error("a JSON patch whose path does not exist applied")
	}
}

// TestConnectOptions: a CONNECT's object is read from its query as the
// apiserver reads it.
func TestConnectOptions(t *testing.T) {
	cases := []struct{ resource, query, want string }{
		{"pods/exec", "command=sh&command=-c&command=id&container=app&stdin=true&tty=0&stdout=1",
			`{"kind":"PodExecOptions","apiVersion":"v1","stdin":true,"stdout":true,"container":"app","command":["sh","-c","id"]}`},
		{"pods/attach", "container=app&stderr=false&stdout=true", `{"kind":"PodAttachOptions","apiVersion":"v1","stdout":true,"container":"app"}`},
		{"pods/portforward", "ports=8080&ports=9090", `{"kind":"PodPortForwardOptions","apiVersion":"v1","ports":[8080,9090]}`},
		{"services/proxy", "path=/metrics", `{"kind":"ServiceProxyOptions","apiVersion":"v1","path":"/metrics"}`},
	}
	for _, tc := range cases {
		q, err := url.ParseQuery(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := connectOptions(tc.resource, q)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("%s?%s:\ngot  %s\nwant %s", tc.resource, tc.query, got, tc.want)
		}
	}
	if _, _, err := connectOptions("pods/portforward", url.Values{"ports": {"http"}}); err == nil {
		t.Error("a port that is not a number was read")
	}
}
