package webhook

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"

	gogithub "github.com/google/go-github/v88/github"
)

// GitHub sends a delivery in the content type the hook was set up with: JSON, or
// a form whose payload field holds the JSON. go-github's ValidatePayload compares
// the Content-Type header as an exact string, so it refuses "application/json;
// charset=utf-8", which a proxy may well send; the media type is parsed here
// instead, the signature checked over the raw body, and the form decoded after.
const (
	mediaJSON = "application/json"
	mediaForm = "application/x-www-form-urlencoded"
)

// mediaTypeOf is the media type of a Content-Type header, lower case and without
// parameters, if it is one GitHub sends.
func mediaTypeOf(contentType string) (string, error) {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err == nil && mediaType != mediaJSON && mediaType != mediaForm {
		err = errors.New("not a type GitHub sends")
	}
	if err != nil {
		return "", fmt.Errorf("unsupported Content-Type %q (%w): set the hook's content type to %s or %s",
			contentType, err, mediaJSON, mediaForm)
	}
	return mediaType, nil
}

// verifySignature checks the delivery's HMAC over the body as it arrived (for a
// form, the encoded form), SHA-256 or else SHA-1.
func verifySignature(header http.Header, body, secret []byte) error {
	sig := header.Get(gogithub.SHA256SignatureHeader)
	if sig == "" {
		sig = header.Get(gogithub.SHA1SignatureHeader)
	}
	if err := gogithub.ValidateSignature(sig, body, secret); err != nil {
		return fmt.Errorf("webhook signature: %w", err)
	}
	return nil
}

// payloadOf is the JSON payload of a body of the given media type.
func payloadOf(mediaType string, body []byte) ([]byte, error) {
	if mediaType == mediaJSON {
		return body, nil
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, fmt.Errorf("form-encoded body: %w", err)
	}
	if !form.Has("payload") {
		return nil, errors.New("form-encoded body without a payload field")
	}
	return []byte(form.Get("payload")), nil
}
