package audit

import (
	"regexp"

	"github.com/tollgate-dev/tollgate/internal/policy"
)

// requestOnly are CEL references whose value comes from the request, not
// from the stored object: an audit has no request to give them.
var requestOnly = []struct {
	name string
	re   *regexp.Regexp
}{
	{"request.userInfo", regexp.MustCompile(`\brequest\s*\.\s*userInfo\b`)},
	{"oldObject", regexp.MustCompile(`\boldObject\b`)},
	{"authorizer", regexp.MustCompile(`\bauthorizer\b`)},
}

// RequestDependence names what of the request a policy's verdict depends
// on (request.userInfo, oldObject, authorizer), "" when it judges the
// object alone. It reads every CEL expression of the policy.
func RequestDependence(p *policy.Policy) string {
	for _, expr := range p.Expressions() {
		for _, r := range requestOnly {
			if r.re.MatchString(expr) {
				return r.name
			}
		}
	}
	return ""
}

// Dependences maps each policy of the set whose verdict depends on the
// request to what it depends on (RequestDependence).
func Dependences(set *policy.Set) map[string]string {
	out := map[string]string{}
	for _, p := range set.Policies {
		if d := RequestDependence(p); d != "" {
			out[p.Name()] = d
		}
	}
	return out
}
