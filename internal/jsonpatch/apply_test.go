package jsonpatch

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		patch   Patch
		want    string // JSON, compared as a value
		wantErr string
	}{
		{"empty patch", `{"a":1}`, nil, `{"a":1}`, ""},
		{"add a member", `{"metadata":{}}`, Patch{Add(Pointer("metadata", "labels"), json.RawMessage(`{"a":"b"}`))}, `{"metadata":{"labels":{"a":"b"}}}`, ""},
		{"escaped key", `{"metadata":{"annotations":{}}}`, Patch{Add(Pointer("metadata", "annotations", "tollgate.dev/status"), json.RawMessage(`"x"`))}, `{"metadata":{"annotations":{"tollgate.dev/status":"x"}}}`, ""},
		{"append to a list", `{"spec":{"containers":[{"name":"a"}]}}`, Patch{Add("/spec/containers/-", json.RawMessage(`{"name":"b"}`))}, `{"spec":{"containers":[{"name":"a"},{"name":"b"}]}}`, ""},
		{"in order", `{}`, Patch{Add("/a", json.RawMessage(`{}`)), Add("/a/b", json.RawMessage(`1`))}, `{"a":{"b":1}}`, ""},
		{"remove", `{"a":1,"b":2}`, Patch{{Op: "remove", Path: "/a"}}, `{"b":2}`, ""},
		{"missing parent", `{}`, Patch{Add("/a/b", json.RawMessage(`1`))}, "", "the patch does not apply"},
		{"unknown operation", `{}`, Patch{{Op: "frob", Path: "/a"}}, "", "unsupported operation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Apply([]byte(tt.doc), tt.patch)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("%s: %v", got, err)
			}
			_ = json.Unmarshal([]byte(tt.want), &w)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}
