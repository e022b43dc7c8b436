# make install: the binaries of `make build` into a directory on PATH.
# sett finds sett-orchestrator, sett-cub and the agents next to itself, so
# they are installed together. PREFIX=/usr/local needs root.
PREFIX ?= $(HOME)/.local
BINDIR ?= $(PREFIX)/bin
INSTALL_BINARIES := sett sett-orchestrator sett-cub sett-worker sett-read sett-writer sett-reviewer sett-agent-llm sett-coder sett-fake-llm

.PHONY: install
install: build ## Install sett and its binaries into $(BINDIR) (PREFIX=~/.local by default; BINDIR overrides)
	@mkdir -p '$(BINDIR)'
	@for b in $(INSTALL_BINARIES); do install -m 0755 '$(BIN)'/$$b '$(BINDIR)'/$$b || exit 1; done
	@echo "installed $(INSTALL_BINARIES) into $(BINDIR)"
	@case ":$$PATH:" in *':$(BINDIR):'*) ;; *) echo "note: $(BINDIR) is not on PATH: add  export PATH=\"$(BINDIR):\$$PATH\"  to your shell profile";; esac

.PHONY: uninstall
uninstall: ## Remove what make install installed from $(BINDIR)
	@for b in $(INSTALL_BINARIES); do rm -f '$(BINDIR)'/$$b; done
	@echo "removed $(INSTALL_BINARIES) from $(BINDIR)"
