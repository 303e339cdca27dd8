package engine

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/admission"
	"github.com/tollgate-dev/tollgate/internal/imageverify"
	"github.com/tollgate-dev/tollgate/internal/imageverify/imageverifytest"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

// imagePolicy is a verifyImages policy on host's app repository, signed
// by the recording's ecdsa key.
func imagePolicy(t *testing.T, host, extra string) *policy.Set {
	t.Helper()
	if extra != "" {
		extra += "\n"
	}
	doc := imageverifytest.Policy(t, "", extra, host+"/app:*", host+"/app@*")
	ps, err := policy.Parse("images.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	set, err := policy.NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func withImages(t *testing.T, req *admission.Request, images ...string) *admission.Request {
	return edit(t, req, func(obj map[string]any) {
		spec := obj["spec"].(map[string]any)
		var cs []any
		for i, img := range images {
			cs = append(cs, map[string]any{"name": fmt.Sprintf("c%d", i), "image": img})
		}
		spec["containers"] = cs
		delete(spec, "initContainers")
	})
}

func TestVerifyImages(t *testing.T) {
	host := imageverifytest.Serve(t)
	set := imagePolicy(t, host, "")
	e := New(set, Options{Images: imageverify.New(imageverify.Options{Registries: imageverify.Registries{Insecure: []string{host}}})})
	g := set.Group("signed-images")
	if g == nil || g.Kind != policy.GroupImages || g.Action != policy.ActionValidate {
		t.Fatalf("group: %+v, want a validating group of its own", g)
	}
	create := captured(t, "create")
	for _, tc := range []struct {
		name    string
		images  []string
		allowed bool
		outcome Outcome
		message string
	}{
		{"signed with a tag signature", []string{host + "/app:ecdsa-tag"}, true, Pass, "verified: " + host + "/app:ecdsa-tag@sha256:"},
		{"signed with a bundle", []string{host + "/app:ecdsa-bundle"}, true, Pass, " by ci"},
		{"one image unsigned", []string{host + "/app:ecdsa-tag", host + "/app:unsigned"}, false, Fail,
			`violates policy signed-images: image ` + host + `/app:unsigned (spec.containers[1].image): no signature found`},
		{"another key", []string{host + "/app:rsa-tag"}, false, Fail, "no signature verified by attestor ci"},
		{"a signature moved from another image", []string{host + "/app:moved"}, false, Fail, "the signed payload is for digest"},
		{"not selected", []string{host + "/other:both", "nginx:1.27"}, true, Skip, "no image the policy checks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := e.Evaluate(context.Background(), g, withImages(t, create, tc.images...))
			if ev.Response.Allowed != tc.allowed || len(ev.Results) != 1 || ev.Results[0].Outcome != tc.outcome || !strings.Contains(ev.Results[0].Message, tc.message) {
				t.Fatalf("allowed %t, results %+v; want allowed %t, %s containing %q", ev.Response.Allowed, ev.Results, tc.allowed, tc.outcome, tc.message)
			}
			if !tc.allowed && !strings.Contains(ev.Response.Message, tc.message) {
				t.Errorf("denial %q does not say %q", ev.Response.Message, tc.message)
			}
		})
	}
	t.Run("an update checks only new images", func(t *testing.T) {
		update := withImages(t, captured(t, "update"), host+"/app:unsigned")
		old := withImages(t, captured(t, "update"), host+"/app:unsigned")
		update.SetObjects(update.Object(), old.Object())
		ev := e.Evaluate(context.Background(), g, update)
		if !ev.Response.Allowed || ev.Results[0].Outcome != Skip {
			t.Fatalf("unchanged image on update: %+v", ev.Results)
		}
		update.SetObjects(update.Object(), withImages(t, captured(t, "update"), host+"/app:ecdsa-tag").Object())
		if ev := e.Evaluate(context.Background(), g, update); ev.Response.Allowed {
			t.Fatalf("a new unsigned image on update allowed: %+v", ev.Results)
		}
	})
}

// TestVerifyImagesCannotCheck: a registry down, or no registry access,
// is the policy's failurePolicy's, named in the result.
func TestVerifyImagesCannotCheck(t *testing.T) {
	host := imageverifytest.Serve(t)
	srv := httptest.NewServer(nil)
	down := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	create := captured(t, "create")
	for _, tc := range []struct {
		name, failure string
		verifier      *imageverify.Verifier
		allowed       bool
		outcome       Outcome
		message       string
	}{
		{"no verifier, Fail", "", nil, false, Fail, "image verification needs registry access"},
		{"no verifier, Ignore", "  failurePolicy: Ignore", nil, true, Error, "could not be evaluated (failurePolicy Ignore): image verification needs registry access"},
		{"registry unreachable", "", imageverify.New(imageverify.Options{}), false, Fail, "could not be evaluated: image " + down + "/app:ecdsa-tag (spec.containers[0].image): resolving"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			registry := host
			if tc.verifier != nil {
				registry = down
			}
			set := imagePolicy(t, registry, tc.failure)
			e := New(set, Options{Images: tc.verifier, ImageBudget: 2 * time.Second})
			ev := e.Evaluate(context.Background(), set.Group("signed-images"), withImages(t, create, registry+"/app:ecdsa-tag"))
			if ev.Response.Allowed != tc.allowed || ev.Results[0].Outcome != tc.outcome || !strings.Contains(ev.Results[0].Message, tc.message) {
				t.Fatalf("allowed %t, results %+v; want allowed %t, %s containing %q", ev.Response.Allowed, ev.Results, tc.allowed, tc.outcome, tc.message)
			}
		})
	}
}
