#!/usr/bin/env bash
# Docs.LayoutNamesEveryFolder: docs/guide/layout.md names every source folder
# (each folder of the tree holding code, CMake or scripts, two levels deep,
# as `folder/`) and every program (each add_executable outside tests/ and
# bench/, with the folder of its main()); .clang-tidy's header filter names
# every top-level folder that holds headers. Prints each omission.
set -euo pipefail
src=${1:?usage: layout_test.sh SOURCE_DIR}
cd "$src"
layout=docs/guide/layout.md
missing=0
say() { echo "layout_test: $*" >&2; missing=1; }

# Folders: top level, and second level under folders that hold sources.
while IFS= read -r dir; do
  grep -qF "\`$dir/\`" "$layout" || say "$layout does not name folder $dir/"
done < <(find . -mindepth 1 -maxdepth 2 -type d \
           -not -path './build*' -not -path './.*' -not -path './out*' \
           -not -path './tests/*' -not -path './proto/*/*' \
           -not -name 'fedberry-*-out' -printf '%P\n' | sort)

# Programs, with the folder their CMakeLists.txt is in.
while IFS=: read -r file _ line; do
  name=$(sed -E 's/.*add_executable\(([A-Za-z0-9_-]+).*/\1/' <<<"$line")
  [[ $name == fedberry-* ]] || continue
  dir=$(dirname "$file")
  dir=${dir#./}
  grep -qE "^\| \`$name\` \| \`$dir/\`" "$layout" ||
    say "$layout does not list program $name in $dir/"
done < <(grep -rn --include=CMakeLists.txt 'add_executable(' . |
           grep -v '^./build' | grep -v '^./tests/' | grep -v '^./bench/')

# clang-tidy's header filter: every top-level folder with headers.
filter=$(grep '^HeaderFilterRegex:' .clang-tidy)
while IFS= read -r dir; do
  [[ $dir == tests || $dir == bench ]] && continue
  grep -qE "[(|]$dir[|)]" <<<"$filter" ||
    say ".clang-tidy's HeaderFilterRegex does not name $dir"
done < <(find . -mindepth 2 -name '*.h' -not -path './build*' -not -path './.*' \
           -not -path './out*' -printf '%P\n' |
           cut -d/ -f1 | sort -u)

((missing == 0)) && echo "layout_test: every folder and program is named"
exit "$missing"
