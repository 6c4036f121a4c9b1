package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// Issue #31 item 7: opening the page with a wrong token shows the token
// form with the error, not a bare plain-text 401; the right token typed
// there opens the page.
func TestBrowserWrongTokenShowsTheFormWithTheError(t *testing.T) {
	ctx := browser(t)
	e := start(t, setup{token: "right-t0ken-4b9c"})
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(e.url+"/?token=wrong-one"), chromedp.WaitVisible(chromedp.CSS("#login"))))
	waitText(t, ctx, "Wrong token.")
	waitSel(t, ctx, "#login #tokenin")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#tokenin"), "right-t0ken-4b9c"),
		chromedp.Click(chromedp.CSS("#login button")),
		chromedp.WaitVisible(chromedp.CSS("#dot.on")),
	))
	require.Zero(t, count(t, ctx, "#loginerr"), "the error is gone once the token is right")
}
