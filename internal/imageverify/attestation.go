package imageverify

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	ssldsse "github.com/secure-systems-lab/go-securesystemslib/dsse"
	sigdsse "github.com/sigstore/sigstore/pkg/signature/dsse"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// intotoPayloadType is the payload type of an in-toto statement in DSSE.
const intotoPayloadType = "application/vnd.in-toto+json"

// Attestation is an in-toto attestation an image must carry: a statement
// of PredicateType about the image's digest, signed by an attestor, whose
// predicate meets every condition.
type Attestation struct {
	// Name says which attestation failed, in reasons.
	Name          string
	PredicateType string
	conditions    []condition
}

// Condition is a CEL expression over the attestation's predicate
// (`predicate`, as JSON); Message is said when it is false.
type Condition struct {
	Expression string
	Message    string
}

type condition struct {
	Condition
	program cel.Program
}

// NewAttestation compiles the conditions, in the apiserver's CEL
// environment (its libraries, its per-expression cost limit) with one
// variable, predicate.
func NewAttestation(name, predicateType string, conditions []Condition) (Attestation, error) {
	a := Attestation{Name: name, PredicateType: predicateType}
	if len(conditions) == 0 {
		return a, nil
	}
	base, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Env(environment.StoredExpressions)
	if err != nil {
		return Attestation{}, fmt.Errorf("the CEL environment: %w", err)
	}
	env, err := base.Extend(cel.Variable("predicate", cel.DynType))
	if err != nil {
		return Attestation{}, fmt.Errorf("the CEL environment: %w", err)
	}
	for i, c := range conditions {
		ast, iss := env.Compile(c.Expression)
		if iss.Err() != nil {
			return Attestation{}, fmt.Errorf("condition %d: %w", i, iss.Err())
		}
		if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
			return Attestation{}, fmt.Errorf("condition %d: must be a bool, not %s", i, t)
		}
		p, err := env.Program(ast, cel.CostLimit(celconfig.PerCallLimit), cel.InterruptCheckFrequency(celconfig.CheckFrequency))
		if err != nil {
			return Attestation{}, fmt.Errorf("condition %d: %w", i, err)
		}
		a.conditions = append(a.conditions, condition{Condition: c, program: p})
	}
	return a, nil
}

// failed is why a predicate does not meet the conditions, "" when it
// does. An expression that errors on the predicate (a field it lacks)
// fails it: the predicate is the image's, so the answer would not change.
func (a Attestation) failed(predicate any) string {
	for _, c := range a.conditions {
		out, _, err := c.program.Eval(map[string]any{"predicate": predicate})
		switch {
		case err != nil:
			return fmt.Sprintf("the condition %q could not be evaluated on the predicate: %v", c.Expression, err)
		case out == types.True:
		case out.Type() != types.BoolType:
			return fmt.Sprintf("the condition %q gave %v, not a bool", c.Expression, out)
		case c.Message != "":
			return c.Message
		default:
			return fmt.Sprintf("the predicate does not meet %s", c.Expression)
		}
	}
	return ""
}

// statement is the part of an in-toto statement (v0.1 or v1) read here.
type statement struct {
	Subject []struct {
		Digest map[string]string `json:"digest"`
	} `json:"subject"`
	PredicateType string `json:"predicateType"`
	Predicate     any    `json:"predicate"`
}

func parseStatement(payload []byte) (*statement, error) {
	var st statement
	if err := json.Unmarshal(payload, &st); err != nil {
		return nil, fmt.Errorf("the payload is not an in-toto statement: %w", err)
	}
	return &st, nil
}

// about tells whether the statement's subject is digest, as cosign's
// IntotoSubjectClaimVerifier does (sha256 subjects only).
func (st *statement) about(digest v1.Hash) error {
	for _, s := range st.Subject {
		if d, ok := s.Digest["sha256"]; ok && "sha256:"+d == digest.String() {
			return nil
		}
	}
	return fmt.Errorf("the statement is not about %s", digest)
}

// verifyEnvelope is what cosign verify-attestation does with an
// attestation tag's layer and a key (verifyOCIAttestation, then
// IntotoSubjectClaimVerifier): the DSSE envelope's signature by the key,
// then the statement's subject against digest.
func verifyEnvelope(ctx context.Context, raw []byte, a Attestor, digest v1.Hash) (*statement, error) {
	if a.verifier == nil {
		return nil, errKeylessTags
	}
	var env ssldsse.Envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("the layer is not a DSSE envelope: %w", err)
	}
	if env.PayloadType != intotoPayloadType {
		return nil, fmt.Errorf("the envelope's payload type is %q, not %s", env.PayloadType, intotoPayloadType)
	}
	v, err := ssldsse.NewEnvelopeVerifier(&sigdsse.VerifierAdapter{SignatureVerifier: a.verifier})
	if err != nil {
		return nil, fmt.Errorf("preparing the verifier: %w", err)
	}
	_, payload, err := v.VerifyAndDecode(ctx, &env)
	if err != nil {
		return nil, fmt.Errorf("the envelope does not verify with the key: %w", err)
	}
	st, err := parseStatement(payload)
	if err != nil {
		return nil, err
	}
	return st, st.about(digest)
}
