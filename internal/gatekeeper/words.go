package gatekeeper

import (
	"fmt"
	"strings"
)

// Answer is what Gatekeeper's webhook makes of a request's violations.
type Answer struct {
	// Denial is the message of a denied request, "" when allowed.
	Denial   string
	Warnings []string
}

// Words turns violations into Gatekeeper's webhook answer
// (pkg/webhook/policy.go getValidationMessages): "[constraint] message"
// for each deny, joined by newlines; each warn a warning; dryrun neither.
func Words(vs []Violation) Answer {
	var deny, warn []string
	for _, v := range vs {
		for _, a := range v.Actions {
			line := fmt.Sprintf("[%s] %s", v.Constraint, v.Message)
			switch a {
			case "deny":
				deny = append(deny, line)
			case "warn":
				warn = append(warn, line)
			}
		}
	}
	return Answer{Denial: strings.Join(deny, "\n"), Warnings: warn}
}
