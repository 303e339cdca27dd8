package imageverify

import (
	"slices"
	"testing"
)

func TestImages(t *testing.T) {
	for _, tc := range []struct {
		name, object string
		want         []Image
	}{
		{"pod", `{"kind":"Pod","spec":{"containers":[{"name":"a","image":"a:1"}],"initContainers":[{"name":"i","image":"i:1"}],"ephemeralContainers":[{"name":"e","image":"e:1"}]}}`,
			[]Image{{"i:1", "spec.initContainers[0].image"}, {"a:1", "spec.containers[0].image"}, {"e:1", "spec.ephemeralContainers[0].image"}}},
		{"deployment", `{"kind":"Deployment","spec":{"template":{"spec":{"containers":[{"name":"a","image":"a:1"},{"name":"b","image":"b:2"}]}}}}`,
			[]Image{{"a:1", "spec.template.spec.containers[0].image"}, {"b:2", "spec.template.spec.containers[1].image"}}},
		{"cronjob", `{"kind":"CronJob","spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"a:1"}]}}}}}}`,
			[]Image{{"a:1", "spec.jobTemplate.spec.template.spec.containers[0].image"}}},
		{"no pod spec", `{"kind":"ConfigMap","data":{"a":"b"}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Images([]byte(tc.object))
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	if _, err := Images([]byte(`{"kind":"Pod","spec":{"containers":"x"}}`)); err == nil {
		t.Fatal("a Pod whose containers are not a list: no error")
	}
}

// TestInspectCredentials: the pull credentials are the Pod spec's that
// holds the images, a template's for a workload.
func TestInspectCredentials(t *testing.T) {
	for _, tc := range []struct {
		name, object string
		sa           string
		secrets      []string
	}{
		{"pod", `{"kind":"Pod","spec":{"serviceAccountName":"web","imagePullSecrets":[{"name":"a"},{"name":"b"}],"containers":[{"image":"a:1"}]}}`, "web", []string{"a", "b"}},
		{"deployment", `{"kind":"Deployment","spec":{"template":{"spec":{"serviceAccountName":"web","imagePullSecrets":[{"name":"a"}],"containers":[{"image":"a:1"}]}}}}`, "web", []string{"a"}},
		{"cronjob", `{"kind":"CronJob","spec":{"jobTemplate":{"spec":{"template":{"spec":{"imagePullSecrets":[{"name":"a"}],"containers":[{"image":"a:1"}]}}}}}}`, "", []string{"a"}},
		{"none", `{"kind":"Pod","spec":{"containers":[{"image":"a:1"}]}}`, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Inspect([]byte(tc.object))
			if err != nil || w.ServiceAccount != tc.sa || !slices.Equal(w.PullSecrets, tc.secrets) || len(w.Images) != 1 {
				t.Fatalf("got %+v, %v; want service account %q, secrets %v", w, err, tc.sa, tc.secrets)
			}
		})
	}
}
