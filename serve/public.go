package serve

import (
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/rukh-dev/rukh/kernel"
)

// ParsePublicURL checks serve-http's --public-url: the scheme and host
// clients reach this server by behind a proxy (http or https, no path,
// query, fragment or user), the base of every endpoint's resource URL and
// metadata URL. It returns it in one form, as audiences are compared
// exactly: the host in lower case, no default or empty port, no trailing
// slash.
func ParsePublicURL(s string) (string, error) {
	bad := func(why string) error {
		return kernel.Errorf(kernel.CodeUsage, "--public-url %q %s", s, why).
			WithHint("give the scheme and host clients reach serve-http by, such as https://mcp.example.com")
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "", bad("is not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return "", bad("must be an absolute http or https URL")
	case u.Host == "" || u.Hostname() == "":
		return "", bad("has no host")
	case u.User != nil:
		return "", bad("must not carry a user or password")
	case u.RawQuery != "" || u.ForceQuery:
		return "", bad("must not have a query")
	case u.Fragment != "" || strings.Contains(s, "#"):
		return "", bad("must not have a fragment")
	case u.Path != "" && u.Path != "/":
		return "", bad("must not have a path: serve-http serves its endpoints at the root (" + EndpointPath("NAMESPACE", "ENDPOINT") + ")")
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", bad("has no valid port (1 to 65535)")
		}
		port = strconv.Itoa(n)
		if port == map[string]string{"http": "80", "https": "443"}[u.Scheme] {
			port = ""
		}
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return u.Scheme + "://" + host, nil
}
