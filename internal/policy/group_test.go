package policy

import "testing"

func TestGroupTypeAction(t *testing.T) {
	tests := []struct {
		kind GroupType
		want Action
	}{
		{GroupValidating, ActionValidate},
		{GroupVAP, ActionValidate},
		{GroupMutating, ActionMutate},
		{GroupInjection, ActionMutate},
	}
	for _, tt := range tests {
		if got := tt.kind.Action(); got != tt.want {
			t.Errorf("%s: action %s, want %s", tt.kind, got, tt.want)
		}
	}
}

func TestGroupsHaveTheirKind(t *testing.T) {
	set, err := LoadDefaults()
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]GroupType{"require-environment": GroupValidating, "nginx-sidecar": GroupInjection} {
		g := set.Group(id)
		if g == nil || g.Kind != want || g.Action != want.Action() {
			t.Errorf("group %s: %+v, want kind %s", id, g, want)
		}
	}
}
