package policy

import (
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/imageverify/imageverifytest"
)

func imagesDoc(verify string, extra ...string) string {
	return header + "metadata: {name: p}\nspec:\n  match: {resources: [pods]" + strings.Join(extra, "") + "}\n  verifyImages:\n" + verify
}

func attestor(fields string) string {
	b, _ := imageverifytest.Recording.ReadFile("cosign/ecdsa.pub")
	testKey := strings.TrimSpace(string(b))
	return "    attestors:\n    - name: ci\n" + fields + "      publicKey: |\n        " + strings.ReplaceAll(testKey, "\n", "\n        ") + "\n"
}

func TestVerifyImagesLoads(t *testing.T) {
	ps, err := Parse("p.yaml", []byte(imagesDoc("    images: [\"registry.example.com/*\"]\n"+attestor("      transparencyLog: Ignore\n"))))
	if err != nil {
		t.Fatal(err)
	}
	c := ps[0].ImageCheck()
	if c == nil {
		t.Fatal("no image check compiled")
	}
	for image, want := range map[string]bool{
		"registry.example.com/app:1": true, "registry.example.com/team/app@sha256:ab": true,
		"registry.example.org/app:1": false, "docker.io/registry.example.com/app": false,
	} {
		if c.Selects(image) != want {
			t.Errorf("Selects(%q) = %t", image, !want)
		}
	}
	if got := ps[0].Spec.Match.Operations; strings.Join(got, ",") != "CREATE,UPDATE" {
		t.Errorf("default operations %v", got)
	}
	set, err := NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	if g := set.Group("p"); g == nil || g.Kind != GroupImages || g.WebhookName() != "p.validate.tollgate.dev" {
		t.Fatalf("group %+v", g)
	}
}

// TestVerifyImagesAttestations: attestations and signature: Ignore reach
// the requirement, and another condition is another cache ID.
func TestVerifyImagesAttestations(t *testing.T) {
	doc := func(builder string) string {
		return imagesDoc("    images: [\"*\"]\n    signature: Ignore\n    attestations:\n    - name: provenance\n" +
			"      predicateType: https://slsa.dev/provenance/v1\n      conditions:\n" +
			"      - {expression: \"predicate.runDetails.builder.id == '" + builder + "'\", message: not built by CI}\n" +
			attestor("      transparencyLog: Ignore\n"))
	}
	ps, err := Parse("p.yaml", []byte(doc("https://ci.example.com/builder")))
	if err != nil {
		t.Fatal(err)
	}
	r := ps[0].ImageCheck().Requirement()
	if !r.NoSignature || len(r.Attestations) != 1 || r.Attestations[0].Name != "provenance" || r.Attestations[0].PredicateType != "https://slsa.dev/provenance/v1" {
		t.Fatalf("requirement %+v", r)
	}
	other, err := Parse("p.yaml", []byte(doc("https://laptop.example.com/")))
	if err != nil {
		t.Fatal(err)
	}
	if other[0].ImageCheck().Requirement().ID == r.ID {
		t.Errorf("two conditions share the cache ID %s", r.ID)
	}
}

func TestVerifyImagesRejects(t *testing.T) {
	ignore := "      transparencyLog: Ignore\n"
	images := "    images: [\"registry.example.com/*\"]\n"
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"no images", imagesDoc(attestor(ignore)), []string{"spec.verifyImages.images: Required value"}},
		{"bad glob", imagesDoc("    images: [\"registry.example.com/[\"]\n" + attestor(ignore)), []string{"spec.verifyImages.images[0]: Invalid value", "not a glob"}},
		{"no attestors", imagesDoc(images), []string{"spec.verifyImages.attestors: Required value"}},
		{"transparency log by default", imagesDoc(images + attestor("")), []string{"spec.verifyImages.attestors[0].transparencyLog: Invalid value", "set transparencyLog: Ignore"}},
		{"unknown transparency log", imagesDoc(images + attestor("      transparencyLog: Sometimes\n")), []string{`spec.verifyImages.attestors[0].transparencyLog: Unsupported value: "Sometimes"`}},
		{"bad key", imagesDoc(images + "    attestors:\n    - {name: ci, transparencyLog: Ignore, publicKey: \"not a key\"}\n"), []string{"spec.verifyImages.attestors[0].publicKey: Invalid value", "reading the public key"}},
		{"delete", imagesDoc(images+attestor(ignore), ", operations: [DELETE]"), []string{`spec.match.operations[0]: Unsupported value: "DELETE"`}},
		{"bad action", imagesDoc(images + "    action: Block\n" + attestor(ignore)), []string{`spec.verifyImages.action: Unsupported value: "Block"`}},
		{"with validate", strings.Replace(imagesDoc(images+attestor(ignore)), "  verifyImages:", "  validate: {labels: [{key: a}]}\n  verifyImages:", 1), []string{"a policy has exactly one action"}},
		{"unknown field", imagesDoc(images + "    mutateDigest: true\n" + attestor(ignore)), []string{`unknown field "spec.verifyImages.mutateDigest"`}},
		{"signature ignored, nothing attested", imagesDoc(images + "    signature: Ignore\n" + attestor(ignore)), []string{"spec.verifyImages.attestations: Required value", "with signature: Ignore"}},
		{"unknown signature rule", imagesDoc(images + "    signature: Optional\n" + attestor(ignore)), []string{`spec.verifyImages.signature: Unsupported value: "Optional"`}},
		{"predicate type by cosign's name", imagesDoc(images + "    attestations: [{name: prov, predicateType: slsaprovenance1}]\n" + attestor(ignore)),
			[]string{`spec.verifyImages.attestations[0].predicateType: Invalid value: "slsaprovenance1"`, "https://slsa.dev/provenance/v1 for cosign's --type slsaprovenance1"}},
		{"attestations with one name", imagesDoc(images + "    attestations: [{name: prov, predicateType: \"https://slsa.dev/provenance/v1\"}, {name: prov, predicateType: \"https://spdx.dev/Document\"}]\n" + attestor(ignore)),
			[]string{`spec.verifyImages.attestations[1].name: Duplicate value: "prov"`}},
		{"condition that does not compile", imagesDoc(images + "    attestations: [{name: prov, predicateType: \"https://slsa.dev/provenance/v1\", conditions: [{expression: \"predicate.a ==\"}]}]\n" + attestor(ignore)),
			[]string{"spec.verifyImages.attestations[0].conditions[0].expression: Invalid value", "Syntax error"}},
		{"condition that is not a bool", imagesDoc(images + "    attestations: [{name: prov, predicateType: \"https://slsa.dev/provenance/v1\", conditions: [{expression: \"'yes'\"}]}]\n" + attestor(ignore)),
			[]string{"spec.verifyImages.attestations[0].conditions[0].expression: Invalid value", "must be a bool, not string"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tc.doc))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}

func keylessDoc(t *testing.T, attestor, trustedRoot string) string {
	t.Helper()
	root := ""
	if trustedRoot != "" {
		root = "    trustedRoot: '" + trustedRoot + "'\n"
	}
	return imagesDoc("    images: [\"*\"]\n" + root + "    attestors:\n" + attestor)
}

func TestVerifyImagesKeyless(t *testing.T) {
	root := imageverifytest.NewSigstore(t).TrustedRoot(t)
	ps, err := Parse("p.yaml", []byte(keylessDoc(t, "    - name: release\n      keyless: {issuer: https://token.actions.githubusercontent.com, subjectRegExp: '^https://github\\.com/example/'}\n", root)))
	if err != nil {
		t.Fatal(err)
	}
	if r := ps[0].ImageCheck().Requirement(); len(r.Attestors) != 1 || r.Attestors[0].Name != "release" {
		t.Fatalf("requirement %+v", r)
	}
	id := "      keyless: {issuer: https://token.actions.githubusercontent.com, subject: https://github.com/example/app}\n"
	for _, tc := range []struct {
		name, attestor, root string
		want                 []string
	}{
		{"no trusted root", "    - name: release\n" + id, "", []string{"spec.verifyImages.trustedRoot: Required value", "cosign trusted-root create"}},
		{"not a trusted root", "    - name: release\n" + id, `{"mediaType": 7}`, []string{`spec.verifyImages.trustedRoot: Invalid value: "(JSON)": reading the trusted root`}},
		{"key and keyless", "    - name: release\n      publicKey: x\n" + id, root, []string{"spec.verifyImages.attestors[0]: Forbidden: give either publicKey or keyless, not both"}},
		{"no subject", "    - name: release\n      keyless: {issuer: https://token.actions.githubusercontent.com}\n", root, []string{"spec.verifyImages.attestors[0].keyless.subject: Required value: give subject or subjectRegExp"}},
		{"subject twice", "    - name: release\n      keyless: {issuer: i, subject: s, subjectRegExp: s}\n", root, []string{"spec.verifyImages.attestors[0].keyless.subjectRegExp: Forbidden: give subject or subjectRegExp, not both"}},
		{"bad regexp", "    - name: release\n      keyless: {issuer: i, subjectRegExp: '('}\n", root, []string{"spec.verifyImages.attestors[0].keyless: Invalid value", "error parsing regexp"}},
		{"unknown SCT rule", "    - name: release\n      certificateTransparency: Maybe\n" + id, root, []string{`spec.verifyImages.attestors[0].certificateTransparency: Unsupported value: "Maybe"`}},
		{"a root for keys only", "    - name: ci\n      transparencyLog: Ignore\n      publicKey: |\n        " + strings.ReplaceAll(imageverifytest.Key(t, "ecdsa"), "\n", "\n        ") + "\n", root,
			[]string{"spec.verifyImages.trustedRoot: Forbidden: only keyless attestors read a trusted root"}},
		{"SCTs for a key", "    - name: ci\n      transparencyLog: Ignore\n      certificateTransparency: Ignore\n      publicKey: |\n        " + strings.ReplaceAll(imageverifytest.Key(t, "ecdsa"), "\n", "\n        ") + "\n", "",
			[]string{"spec.verifyImages.attestors[0].certificateTransparency: Forbidden: only keyless signatures carry a certificate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(keylessDoc(t, tc.attestor, tc.root)))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}
