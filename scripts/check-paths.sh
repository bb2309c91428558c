#!/usr/bin/env bash
# Every repository path quoted in the docs must exist: the Markdown of docs/, every
# README.md, the //! headers and /// docs of every .rs file, and the comments of the
# .pest grammars. Exits 1 naming each missing path; `-v` also lists what it skipped.
#
# A Markdown link target must exist next to the linking file. A quoted word counts as
# a path when it has a `/` and its first part names an entry next to the quoting
# file, in its crate, in that crate's src/, or at the repository root; it must then
# exist under one of those (a `../` path: next to the file). Not taken as paths, and
# counted in the summary (`-v` lists them): URLs, absolute and `~` paths, build output
# (target/...), paths that leave the repository (and shared/..., the project's folder
# beside it), patterns and placeholders (`{a,b}`, `*`, `<kind>`, `$VAR`), PostgreSQL's
# own source paths (src/{bin,backend,common,fe_utils,include,interfaces,port,test}/...),
# and words such as `int/double` or `-h/-p/-U` whose first part names nothing here.
set -euo pipefail
cd "$(dirname "$0")/.."
verbose=${1:-}
root=$(realpath .)

missing=0
checked=0
declare -A skipped=()
skip() { # category, file, word
    skipped[$1]=$((${skipped[$1]:-0} + 1))
    if [[ $verbose == -v ]]; then echo "skipped ($1): $2: $3"; fi
}

crate_root() { # the nearest directory holding a Cargo.toml, at most the repository
    local d=$1
    while [[ $d != . && ! -e $d/Cargo.toml ]]; do d=$(dirname "$d"); done
    echo "$d"
}

words() { # the quoted text of a file: `link TARGET` or `word WORD`, one a line
    local file=$1 text
    if [[ $file == *.rs ]]; then
        text=$(sed -n 's|^[[:space:]]*//[!/]||p' "$file")
    elif [[ $file == *.pest ]]; then
        text=$(sed -n 's|^[[:space:]]*//||p' "$file")
    else
        text=$(cat "$file")
    fi
    # URLs out first, so that none of their parts looks like a path.
    local url='[A-Za-z][A-Za-z+.-]*://[^ )>`"]*'
    { grep -oE "$url" <<<"$text" || true; } | sed 's/^/url /'
    text=$(sed -E "s#$url#<url>#g" <<<"$text")
    # Markdown link targets are paths from the file's folder, whatever they look like.
    { grep -oE '\]\([^)# ]+[)#]' <<<"$text" || true; } | sed -E 's/^\]\(/link /; s/[)#]$//'
    text=$(sed -E 's/\]\([^)]*\)/]/g' <<<"$text")
    { grep -oE '([A-Za-z0-9_.~$<>*-]|\{[^} ]*\})*/([A-Za-z0-9_./~$<>*-]|\{[^} ]*\})*' <<<"$text" || true; } |
        sed -E 's/[.:]+$//; s/^/word /'
}

check_word() { # file, kind (link or word), word
    local file=$1 kind=$2 word=$3 dir crate base first
    dir=$(dirname "$file")
    crate=$(crate_root "$dir")
    word=${word#./}
    [[ $kind == url ]] && { skip url "$file" "$word"; return 0; }
    case $word in
    "" | /* | "<url>"*) [[ $word == /?* ]] && skip absolute "$file" "$word"; return 0 ;;
    '~'*) skip absolute "$file" "$word"; return 0 ;;
    target/*) skip build "$file" "$word"; return 0 ;;
    shared/* | ../*shared/*) skip outside "$file" "$word"; return 0 ;; # the project's, beside the repository
    *'{'* | *'}'* | *'*'* | *'<'* | *'>'* | *'$'* | *...*) skip pattern "$file" "$word"; return 0 ;;
    src/bin/* | src/backend/* | src/common/* | src/fe_utils/* | src/include/* | \
        src/interfaces/* | src/port/* | src/test/*)
        [[ -e $word ]] || { skip postgresql "$file" "$word"; return 0; } ;;
    esac
    if [[ $kind == link || $word == ../* ]]; then
        if [[ $(realpath -m "$dir/$word") != "$root"/* ]]; then
            skip outside "$file" "$word"
            return 0
        fi
        checked=$((checked + 1))
        [[ -e $dir/$word ]] || { echo "$file: $word: no such file"; missing=$((missing + 1)); }
        return 0
    fi
    first=${word%%/*}
    for base in "$dir" "$crate" "$crate/src" .; do
        if [[ -e $base/$first ]]; then
            checked=$((checked + 1))
            for base in "$dir" "$crate" "$crate/src" .; do
                [[ -e $base/$word ]] && return 0
            done
            echo "$file: $word: no such file"
            missing=$((missing + 1))
            return 0
        fi
    done
    skip word "$file" "$word"
}

while IFS= read -r file; do
    while read -r kind word; do
        check_word "$file" "$kind" "$word"
    done < <(words "$file")
done < <(git ls-files --cached --others --exclude-standard 'docs/*.md' '*README.md' '*.rs' '*.pest')

summary="$checked quoted paths checked"
for k in $(printf '%s\n' "${!skipped[@]}" | sort); do summary+=", ${skipped[$k]} skipped ($k)"; done
echo "check-paths: $summary"
if ((missing > 0)); then
    echo "check-paths: $missing quoted paths do not exist" >&2
    exit 1
fi
