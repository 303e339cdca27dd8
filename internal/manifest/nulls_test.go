package manifest

import "testing"

func TestDropNullMembers(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"nothing null", `{"a":1,"b":"null"}`, `{"a":1,"b":"null"}`},
		{"top-level member", `{"a":null,"b":1}`, `{"b":1}`},
		{"nested, as empty YAML keys give", `{"metadata":{"name":"p","annotations":null},"spec":{"securityContext":null,"containers":[{"name":"c","securityContext":{"privileged":null}}]}}`,
			`{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","securityContext":{}}]}}`},
		{"list elements stay", `{"a":[null,1]}`, `{"a":[null,1]}`},
		{"big integers keep their digits", `{"a":null,"n":12345678901234567890}`, `{"n":12345678901234567890}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := dropNullMembers([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}
