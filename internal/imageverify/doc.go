// Package imageverify checks that container images are signed: it finds a
// workload's images, resolves tags to digests, fetches the signatures a
// registry holds for a digest and verifies them against a policy's
// attestors, and caches what it found by digest and policy.
//
// Signatures are read in both forms cosign writes them:
//   - the Sigstore bundle (cosign --new-bundle-format, cosign v3's default),
//     an OCI referrer of the image, verified by sigstore-go;
//   - the older signature tag (sha256-<hex>.sig), one simple-signing
//     payload per layer with its signature in an annotation, verified here
//     with sigstore's signature verifiers (sigstore.go says how, and the
//     tests check it against cosign verify).
package imageverify
