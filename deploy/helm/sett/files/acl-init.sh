#!/bin/sh
# Builds the bundled Redis's ACL file at pod start: one line per user of
# $RULES ("<user> <rules...>"), with the SHA-256 of the user's password
# from the directory $PASSWORDS (the mounted password Secret: one file per
# key, key "password" for the default user), written to $OUT. Hashes only:
# no password is written in clear. Fails, naming the key, when the Secret
# lacks a user's password.
set -eu
umask 077
tmp="$OUT.tmp"
: > "$tmp"
while read -r user rules; do
	[ -n "$user" ] || continue
	key=$user
	[ "$user" = default ] && key=password
	f="$PASSWORDS/$key"
	if [ ! -s "$f" ]; then
		echo "the Redis password Secret has no key \"$key\" (the password of Redis user $user): add it, or leave redis.bundled.existingSecret empty to let the chart make the passwords" >&2
		exit 1
	fi
	hash=$(sha256sum < "$f" | cut -d' ' -f1)
	echo "user $user reset on #$hash $rules" >> "$tmp"
done < "$RULES"
mv "$tmp" "$OUT"
