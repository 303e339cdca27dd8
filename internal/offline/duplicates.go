package offline

import (
	"fmt"
	"strings"

	"github.com/tollgate-dev/tollgate/internal/manifest"
)

// Duplicates names the objects given more than once with one identity
// (group, kind, namespace as the request would have it, name), each with
// every file:line: a base and its overlay rendered together, or two
// fixtures of one name. Each is still checked on its own; this is for a
// warning. Objects named by generateName only are never duplicates.
func Duplicates(objs []*manifest.Object, kinds *manifest.Kinds, defaultNS string) []string {
	where := map[string][]string{}
	var order []string
	for _, o := range objs {
		if o.Name == "" {
			continue
		}
		ns := ""
		if m, err := kinds.Resource(o.GVK, o.Namespace != ""); err != nil || m.Namespaced {
			ns = o.Namespace
			if ns == "" {
				ns = defaultNS
			}
		}
		id := o.GVK.GroupKind().String() + " " + o.Name
		if ns != "" {
			id = o.GVK.GroupKind().String() + " " + ns + "/" + o.Name
		}
		if len(where[id]) == 0 {
			order = append(order, id)
		}
		where[id] = append(where[id], o.Where())
	}
	var out []string
	for _, id := range order {
		if w := where[id]; len(w) > 1 {
			out = append(out, fmt.Sprintf("%s is given %d times (%s); each is checked on its own", id, len(w), strings.Join(w, ", ")))
		}
	}
	return out
}
