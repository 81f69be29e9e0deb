#!/usr/bin/env bash
# Mutation check of Tests/DataTests/WritePathPermissionPropertyTests.swift: for each mutation below
# (a source file, an exact snippet of it and its replacement) that drops the permission plan from
# one path of the data engine, applies it, runs that suite through Deploy/test.sh (which starts
# the test PostgreSQL under .local/test and builds what the tests need), expects the suite to fail
# with an issue it recorded, and restores the file — after each mutation, and on any exit (a trap).
# It reports which mutations the suite caught.
#
# Run by hand, not in CI: every mutation costs a build and a test run. A run without mutations
# comes first (the suite must pass unmutated; --no-baseline skips it).
#
# Usage: Deploy/mutation-check.sh [--list] [--dry-run] [--no-baseline] [NAME...]
#   NAME...        only these mutations (default: all)
#   --list         print the mutations' names and files
#   --dry-run      only check that every snippet still occurs exactly once in its file
#   --no-baseline  skip the unmutated run
# Logs: .local/mutation-check/NAME.log (Deploy/test.sh's output) and NAME.swift-test.log (the test
# run's full output). Exit status 0 only when every mutation run was caught.
set -euo pipefail
cd "$(dirname "$0")/.."

suite=WritePathPermissionPropertyTests
logs=$PWD/.local/mutation-check
names=() files=() edits=()

# mutation NAME FILE, then on stdin: the exact snippet, a line `>>>>`, and its replacement.
mutation() { names+=("$1"); files+=("$2"); edits+=("$(cat)"); }

mutation update-by-id Shared/DataEngine/DataEngine+Write.swift <<'EOF'
            try WriteStatements.update(prepared, table: table, schema: catalog.schemaName, into: &sql) { sql in
                WriteStatements.byId(id, grant: grant, into: &sql)
>>>>
            try WriteStatements.update(prepared, table: table, schema: catalog.schemaName, into: &sql) { sql in
                WriteStatements.byId(id, grant: .allRows, into: &sql)
EOF

mutation upsert-conflict-filter Shared/DataEngine/Write/WriteStatements.swift <<'EOF'
            // `t` is the existing row here: one the caller may not update stays untouched.
            if let rowFilter = grant.rowFilter {
                sql.append(" WHERE ")
                rowFilter(&sql, "t")
            }
>>>>
            _ = grant
EOF

mutation bulk-upsert-grant Shared/DataEngine/DataEngine+Write.swift <<'EOF'
        let conflict = try await upsertConflict(tableName, context: context)
        return try await insert(tableName, objects: objects, onConflict: conflict, change: .bulkUpsert, context: context).ids
>>>>
        let conflict = WriteStatements.Conflict.update(.allRows)
        return try await insert(tableName, objects: objects, onConflict: conflict, change: .bulkUpsert, context: context).ids
EOF

mutation bulk-upsert-partial-refusal Shared/DataEngine/DataEngine+Write.swift <<'EOF'
                guard written == Int64(count) else {
                    throw DataError.permissionDenied(DataOperation.update.rawValue, table: table.name)
                }
>>>>
                _ = written
EOF

mutation bulk-update-grant Shared/DataEngine/DataEngine+Write.swift <<'EOF'
            try WriteStatements.update(prepared, table: table, schema: catalog.schemaName, into: &sql) { sql in
                try Self.filter(condition, grant: grant, table: table, relations: relations, into: &sql)
>>>>
            try WriteStatements.update(prepared, table: table, schema: catalog.schemaName, into: &sql) { sql in
                try Self.filter(condition, grant: .allRows, table: table, relations: relations, into: &sql)
EOF

mutation delete-by-id Shared/DataEngine/DataEngine+Write.swift <<'EOF'
        try WriteStatements.delete(table: table, schema: catalog.schemaName, into: &sql) { sql in
            WriteStatements.byId(id, grant: grant, into: &sql)
>>>>
        try WriteStatements.delete(table: table, schema: catalog.schemaName, into: &sql) { sql in
            WriteStatements.byId(id, grant: .allRows, into: &sql)
EOF

mutation bulk-delete-grant Shared/DataEngine/DataEngine+Write.swift <<'EOF'
        try WriteStatements.delete(table: table, schema: catalog.schemaName, into: &sql) { sql in
            try Self.filter(condition, grant: grant, table: table, relations: relations, into: &sql)
>>>>
        try WriteStatements.delete(table: table, schema: catalog.schemaName, into: &sql) { sql in
            try Self.filter(condition, grant: .allRows, table: table, relations: relations, into: &sql)
EOF

mutation find-grant Shared/DataEngine/DataEngine+Read.swift <<'EOF'
        var find = FindStatement(query: query, table: table, schema: catalog.schemaName, grant: grant)
        find.relations = RelationPaths(catalog: catalog, access: access, identity: identity)
        let sql = try find.page()
>>>>
        var find = FindStatement(query: query, table: table, schema: catalog.schemaName, grant: .allRows)
        find.relations = RelationPaths(catalog: catalog, access: access, identity: identity)
        let sql = try find.page()
EOF

mutation count-grant Shared/DataEngine/DataEngine+Read.swift <<'EOF'
        var find = FindStatement(query: query, table: table, schema: catalog.schemaName, grant: grant)
        find.relations = RelationPaths(catalog: catalog, access: access, identity: identity)
        let sql = try find.count()
>>>>
        var find = FindStatement(query: query, table: table, schema: catalog.schemaName, grant: .allRows)
        find.relations = RelationPaths(catalog: catalog, access: access, identity: identity)
        let sql = try find.count()
EOF

mutation relation-parent-grants Shared/DataEngine/Relations/RelationStatements.swift <<'EOF'
        for grant in grants {
            guard let filter = grant.rowFilter else { continue }
            sql.append(" AND ")
            filter(&sql, "t")
        }
>>>>
        _ = grants
EOF

mutation relation-children-find Shared/DataEngine/Relations/RelationStatements.swift <<'EOF'
                try DataEngine.filter(nil, grant: grant, table: table, into: &sql)
>>>>
                try DataEngine.filter(nil, grant: .allRows, table: table, into: &sql)
EOF

mutation load-relation-parent Shared/DataEngine/Relations/DataEngine+Relations.swift <<'EOF'
        guard try await session.column(statements.findParent(grant: parentGrant), as: Int64.self).first == 1 else {
>>>>
        guard try await session.column(statements.findParent(grant: .allRows), as: Int64.self).first == 1 else {
EOF

mutation load-relation-children Shared/DataEngine/Relations/DataEngine+Relations.swift <<'EOF'
        var find = FindStatement(query: query, table: resolved.child, schema: resolved.catalog.schemaName, grant: childGrant)
>>>>
        var find = FindStatement(query: query, table: resolved.child, schema: resolved.catalog.schemaName, grant: .allRows)
EOF

mutation loaded-relations-parent Shared/DataEngine/Relations/RelationLoader.swift <<'EOF'
        if let filter = grants.parent.rowFilter {
>>>>
        if let filter = AccessGrant.allRows.rowFilter {
EOF

mutation loaded-relations-children Shared/DataEngine/Relations/RelationLoader.swift <<'EOF'
            condition, grant: grants.child, table: childTable,
>>>>
            condition, grant: .allRows, table: childTable,
EOF

mutation where-through-relation Shared/DataEngine/Relations/RelationPaths.swift <<'EOF'
            try writeGrant(.find, on: hop.table, rowAlias: "r\(index)", into: &sql)
>>>>
            sql.append("TRUE")
EOF

mutation unit-of-work-identity Shared/DataEngine/DataEngine+Transaction.swift <<'EOF'
                let context = WriteContext(session: session, identity: identity, schemaChanges: false)
>>>>
                let context = WriteContext(
                    session: session, identity: { var system = identity; system.isSystem = true; return system }(),
                    schemaChanges: false)
EOF

mutation unit-of-work-find Shared/DataEngine/DataEngine+Transaction.swift <<'EOF'
            let rows = try await find(table, query: try Self.findQuery(payload), identity: context.identity, session: context.session)
>>>>
            let rows = try await find(
                table, query: try Self.findQuery(payload),
                identity: { var system = context.identity; system.isSystem = true; return system }(), session: context.session)
EOF

mutation real-time-row-layers Shared/DataEngine/Changes/ObjectReadAccess.swift <<'EOF'
            for layer in plan.rowLayers {
                if let decided = Self.decide(layer, objectId: objectId, ownerId: ownerId, acls: acls) { return decided == .grant }
            }
            return plan.fallback == .grant
>>>>
            return plan.fallback == .grant
EOF

mutation object-permits Shared/DataEngine/DataEngine+ObjectPermits.swift <<'EOF'
        if let filter = grant?.rowFilter {
>>>>
        if let filter = AccessGrant.allRows.rowFilter {
EOF

mutation object-acl-right Shared/DataEngine/DataEngine+Permissions.swift <<'EOF'
        WriteStatements.byId(objectID, grant: grant, into: &check)
>>>>
        WriteStatements.byId(objectID, grant: .allRows, into: &check)
EOF

mutation access-control-row-filter Shared/DataEngine/AccessControl.swift <<'EOF'
            return AccessGrant { sql, alias in filter.write(into: &sql, rowAlias: alias) }
>>>>
            _ = filter
            return AccessGrant.allRows
EOF

mutation permission-needs-update Shared/DataEngine/AccessControl.swift <<'EOF'
            return try rowGrant(caller, operation, table: table, rules: rules, appID: catalog.appID).and(ownRow).and(update)
>>>>
            _ = update
            return try rowGrant(caller, operation, table: table, rules: rules, appID: catalog.appID).and(ownRow)
EOF

list=0 dry_run=0 baseline=1 selected=()
for argument in "$@"; do
  case $argument in
    --list) list=1 ;;
    --dry-run) dry_run=1 ;;
    --no-baseline) baseline=0 ;;
    -*) echo "error: unknown option $argument" >&2; exit 2 ;;
    *) selected+=("$argument") ;;
  esac
done

if [ "$list" -eq 1 ]; then
  for i in "${!names[@]}"; do printf '%-30s %s\n' "${names[$i]}" "${files[$i]}"; done
  exit 0
fi

# The mutations to run, as indexes into names.
chosen=()
if [ ${#selected[@]} -eq 0 ]; then
  chosen=("${!names[@]}")
else
  for name in "${selected[@]}"; do
    found=""
    for i in "${!names[@]}"; do [ "${names[$i]}" = "$name" ] && found=$i; done
    [ -n "$found" ] || { echo "error: no mutation named $name (see --list)" >&2; exit 2; }
    chosen+=("$found")
  done
fi

# edit_file FILE EDIT [--check]: replaces EDIT's snippet, which must occur exactly once, in FILE;
# with --check only verifies that it does.
edit_file() {
  python3 - "$@" <<'PY'
import sys
path, edit, check = sys.argv[1], sys.argv[2], len(sys.argv) > 3
snippet, marker, replacement = edit.partition("\n>>>>")
if not marker:
    sys.exit(f"{path}: the mutation has no '>>>>' line")
replacement = replacement[1:] if replacement.startswith("\n") else replacement
with open(path, encoding="utf-8") as source:
    text = source.read()
count = text.count(snippet)
if count != 1:
    sys.exit(f"{path}: the snippet occurs {count} times, not once (has the source changed?):\n{snippet}")
if not check:
    with open(path, "w", encoding="utf-8") as source:
        source.write(text.replace(snippet, replacement))
PY
}

if [ "$dry_run" -eq 1 ]; then
  stale=0
  for i in "${chosen[@]}"; do
    if edit_file "${files[$i]}" "${edits[$i]}" --check; then
      printf '%-30s applies\n' "${names[$i]}"
    else
      stale=1
    fi
  done
  exit "$stale"
fi

# The file under mutation and its original text, and the test run under way: whatever ends the
# script, the trap ends that run (it stops what it started) and puts the file back.
mutated="" backup=$(mktemp) suite_pid=""
restore() {
  [ -n "$mutated" ] || return 0
  cat "$backup" >"$mutated"
  mutated=""
}
stop_suite() {
  [ -n "$suite_pid" ] || return 0
  kill -TERM "$suite_pid" 2>/dev/null || true
  wait "$suite_pid" 2>/dev/null || true
  suite_pid=""
}
trap 'stop_suite; restore; rm -f "$backup"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

mkdir -p "$logs"
swift_log=.local/test/swift-test.log

# run_suite NAME: Deploy/test.sh limited to the suite, its output in the logs; its exit status.
# (The test run's own log is removed first: a run that stops before the tests, such as a failed
# build, leaves none, and must not be judged by an earlier run's.) It runs in the background so
# that a signal reaches the trap at once rather than after the run.
run_suite() {
  local status=0
  rm -f "$swift_log"
  Deploy/test.sh --filter "$suite" >"$logs/$1.log" 2>&1 &
  suite_pid=$!
  wait "$suite_pid" || status=$?
  suite_pid=""
  if [ -f "$swift_log" ]; then cp "$swift_log" "$logs/$1.swift-test.log"; else rm -f "$logs/$1.swift-test.log"; fi
  return "$status"
}

if [ "$baseline" -eq 1 ]; then
  echo "unmutated run (the suite must pass) ..."
  run_suite baseline || { echo "error: the suite fails without any mutation; see $logs/baseline.log" >&2; exit 1; }
  grep -Eq 'Test run with [1-9][0-9]* tests?' "$logs/baseline.swift-test.log" ||
    { echo "error: --filter $suite ran no test; see $logs/baseline.swift-test.log" >&2; exit 1; }
fi

results=() caught=0
for i in "${chosen[@]}"; do
  name=${names[$i]} file=${files[$i]}
  echo "mutation $name ($file) ..."
  cp "$file" "$backup"
  mutated=$file
  if ! edit_file "$file" "${edits[$i]}"; then
    restore
    results+=("$(printf '%-30s STALE: the snippet is not in %s once' "$name" "$file")")
    continue
  fi
  if run_suite "$name"; then
    verdict="MISSED: the suite passed"
  elif [ ! -f "$logs/$name.swift-test.log" ]; then
    verdict="ERROR: no test ran (a build failure?); see $logs/$name.log"
  elif grep -q 'recorded an issue' "$logs/$name.swift-test.log"; then
    verdict="caught"
    caught=$((caught + 1))
  else
    verdict="ERROR: the run failed without an issue from the suite; see $logs/$name.swift-test.log"
  fi
  restore
  results+=("$(printf '%-30s %s' "$name" "$verdict")")
  echo "  $verdict"
done

echo
printf '%s\n' "${results[@]}"
echo "$caught of ${#chosen[@]} mutations caught"
[ "$caught" -eq ${#chosen[@]} ]
