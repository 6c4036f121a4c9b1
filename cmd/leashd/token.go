package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// The API's token (issue #26): every request to /api and /mcp carries it,
// on loopback too, since an agent leashd starts runs as leashd's user on
// this machine. It is LEASHD_WEB_TOKEN, or else one leashd generates at
// first start and keeps in the state directory (config.WebToken), where
// the clients on this machine (leashd ask, leashd mcp) find it.

// useGeneratedToken makes the API's token the one kept in the state
// directory (created at first start) when leashd serves HTTP and
// LEASHD_WEB_TOKEN is not set; s.tokenFile then names the file. Call it
// before building the logger, which redacts the token like any secret.
func (s *settings) useGeneratedToken() error {
	if !s.web.Serves() || s.web.Token != "" {
		return nil
	}
	tok, _, err := s.WebToken()
	if err != nil {
		return err
	}
	s.web.Token, s.tokenFile = tok, s.WebTokenFile()
	if s.webApp != nil {
		s.webApp.TokenFile = s.tokenFile
	}
	return nil
}

// printTokenURL prints the address that opens the web page with the
// generated token, as Jupyter does, so that a person can copy it from the
// start-up output. It is written to w (stderr) by itself, not through the
// logger: the logger redacts every secret in every line, and exempting
// one line from it would make its guarantee depend on which message a
// token reaches. In text format the address stands alone on its line, to
// be copied whole; in JSON format the line is a JSON object too, so log
// pipelines still parse every line. With the page off it names the file
// the token of /mcp is in.
func printTokenURL(w io.Writer, s settings, baseURL string) {
	if s.tokenFile == "" {
		return
	}
	if strings.EqualFold(s.LogFormat, "json") {
		args := []any{"token_file", s.tokenFile}
		if s.web.PageOn() {
			args = append(args, "url", pageURL(baseURL, s.web.Token))
		}
		slog.New(slog.NewJSONHandler(w, nil)).Info("the API's token (LEASHD_WEB_TOKEN is not set)", args...)
		return
	}
	if !s.web.PageOn() {
		fmt.Fprintf(w, "leashd: /mcp needs the API token in %s (LEASHD_WEB_TOKEN is not set); leashd ask and leashd mcp read it there\n", s.tokenFile)
		return
	}
	fmt.Fprintf(w, "leashd: to open the web page, copy this address into a browser (the token is also in %s):\n    %s\n",
		s.tokenFile, pageURL(baseURL, s.web.Token))
}

// pageURL is the page's address with the token.
func pageURL(baseURL, token string) string { return baseURL + "/?token=" + token }

// clientToken is the token a client of a running leashd sends: flagged
// (--token), else LEASHD_WEB_TOKEN, else the one that leashd generated
// in the state directory.
func clientToken(s settings, flagged string) (string, error) {
	if flagged != "" {
		return flagged, nil
	}
	if s.web.Token != "" {
		return s.web.Token, nil
	}
	return s.ReadWebToken()
}
