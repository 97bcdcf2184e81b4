// Package licensing is the app's side of the licensing service, in Go with the standard library only.
//
// An app that ships to customers needs four things, and this package does each without any API key
// inside the app:
//
//   - CheckKey reads a licence key as a person typed it (case, hyphens, spaces and Crockford's look-alike
//     letters set aside) and refuses a typo by its check characters, before any network call.
//   - VerifyLicenseFile checks a signed licence file offline: the product's Ed25519 signature, then its
//     dates and the machine it is bound to.
//   - VerifyWebhook checks a webhook delivery (Standard Webhooks) on the vendor's server.
//   - App talks to the API as the licence itself (Authorization: License <key>): it validates, activates
//     this machine, keeps a floating seat alive with heartbeats, releases it on Stop, fetches a licence
//     file and asks the product's update feed.
//
// Every answer of the offline checks is one of the codes of the shared test vectors
// (sdks/test-vectors), which the TypeScript, Python and Java libraries answer the same way.
package licensing
