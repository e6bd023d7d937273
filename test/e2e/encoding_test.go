package e2e

import "encoding/base64"

func base64Of(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
