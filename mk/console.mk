# The web console's screenshots (docs/img), as the browser test takes them.
# `make test` writes them into a temporary directory, so a run never
# changes the tree; this target refreshes the committed ones.

.PHONY: screenshots
screenshots: ## Refresh docs/img/console-*.png by running the console's browser test (headless Chromium)
	SETT_SCREENSHOTS=docs/img $(GO) test -count=1 -run '^TestConsoleInBrowser$$' ./integration/
