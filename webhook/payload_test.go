package webhook

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// A delivery is accepted in either content type GitHub sends, whatever the case
// and parameters of the header; any other type is 415, never 401, and a bad
// signature is 401 in every accepted type.
func TestContentTypes(t *testing.T) {
	payload := fixture(t, "workflow_job.queued.payload.json")
	form := []byte(url.Values{"payload": {string(payload)}}.Encode())
	other := []byte("another body")
	for _, tc := range []struct {
		name, contentType string
		body              []byte
		signed            []byte // what the signature covers, if not the body
		status            int
		text              string
	}{
		{name: "json", contentType: "application/json", body: payload, status: 202},
		{name: "json with a charset", contentType: "application/json; charset=utf-8", body: payload, status: 202},
		{name: "json in capitals", contentType: "APPLICATION/JSON", body: payload, status: 202},
		{name: "form", contentType: "application/x-www-form-urlencoded", body: form, status: 202},
		{name: "form with a charset", contentType: "Application/X-WWW-Form-Urlencoded; charset=UTF-8", body: form, status: 202},
		{name: "text", contentType: "text/plain", body: payload, status: 415, text: `unsupported Content-Type "text/plain"`},
		{name: "text with a bad signature", contentType: "text/plain", body: payload, signed: other, status: 415},
		{name: "no content type", contentType: "", body: payload, status: 415, text: "application/json or application/x-www-form-urlencoded"},
		{name: "an unparsable content type", contentType: "application/json; charset", body: payload, status: 415},
		{name: "json with a bad signature", contentType: "application/json", body: payload, signed: other, status: 401},
		{name: "json with a charset and a bad signature", contentType: "application/json; charset=utf-8", body: payload, signed: other, status: 401},
		{name: "json in capitals with a bad signature", contentType: "APPLICATION/JSON", body: payload, signed: other, status: 401},
		{name: "form with a bad signature", contentType: "application/x-www-form-urlencoded", body: form, signed: other, status: 401},
		{name: "form signed over its JSON, not the form", contentType: "application/x-www-form-urlencoded", body: form, signed: payload, status: 401},
		{name: "form without a payload field", contentType: "application/x-www-form-urlencoded", body: []byte("other=1"), status: 400, text: "without a payload field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			s, _ := newTestServer(t, rec)
			sig := sign(tc.body)
			if tc.signed != nil {
				sig = sign(tc.signed)
			}
			req := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(tc.body))
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			req.Header.Set("X-GitHub-Event", "workflow_job")
			req.Header.Set("X-GitHub-Delivery", "d")
			req.Header.Set("X-Hub-Signature-256", sig)
			resp := httptest.NewRecorder()
			s.Handler().ServeHTTP(resp, req)
			require.Equal(t, tc.status, resp.Code, resp.Body.String())
			require.Contains(t, resp.Body.String(), tc.text)
			if tc.status != http.StatusAccepted {
				require.Empty(t, rec.signals)
				return
			}
			require.Len(t, rec.signals, 1)
			require.Equal(t, int64(289782451), rec.signals[0].JobID, "the job is read from the payload")
		})
	}
}
