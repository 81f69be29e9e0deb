import Foundation
import TestSupport
import Testing

/// PyPI's schemathesis against the running system, from its own `openapi.json`: generated valid
/// and invalid requests for every operation (a bounded number each, from a fixed seed), and not
/// one answered 5xx or with a body its description does not allow — the error envelope included.
/// The app is seeded with what the description's examples name (``DocumentExampleSeed``), the
/// examples steer the fuzzing phase as dictionaries (`Tests/Peers/schemathesis-config.py`), all
/// four phases run (examples, coverage, fuzzing, stateful), and the operations schemathesis warns
/// about — whose generated valid requests were all refused ("rejected") or all 404 in a phase —
/// stay under each part's bound (together fewer than 10 of each, as issue 38 asks).
/// It calls with the server-code key, which every management route takes. One worker: with two,
/// hypothesis (under schemathesis) once failed describing a strategy from two threads at once;
/// instead the operations are split in three runs, side by side, each against its own cluster (the
/// one run was the suite's longest test by a minute).
@Suite(.timeLimit(.minutes(30))) struct SchemathesisTests {
    /// Examples per operation: `BAAS_TEST_SCHEMATHESIS_EXAMPLES`, else a bound CI can afford.
    static let examples = ProcessInfo.processInfo.environment["BAAS_TEST_SCHEMATHESIS_EXAMPLES"] ?? "8"

    /// Which operations each run takes: together, every one. The app-wide switches (settings and
    /// permission rules) run against a cluster of their own: one of them turning dynamic schema or
    /// registration off, or denying a table to every role, would refuse the others' requests.
    static let dataPaths = "^/(data|transaction|geo)"
    static let appWide = "permissions|settings"
    static let parts: [Part] = [
        Part(["--include-path-regex", dataPaths, "--exclude-path-regex", appWide], mostWarned: 3),
        // What no seed can reach stays warned: `rt/socket` (a WebSocket upgrade), `rt/poll` (a live
        // session), push credentials (a real private key), a scheduled message's cancellation and
        // the email links (their tokens are random).
        Part(["--exclude-path-regex", "\(dataPaths)|\(appWide)"], mostWarned: 4),
        // No link leads between these: the stateful phase has nothing to follow.
        Part(["--include-path-regex", appWide, "--phases", "examples,coverage,fuzzing"], mostWarned: 1),
    ]

    /// One run: its operations and phases, and the most operations it may leave with each warning
    /// (the parts' bounds add up to 8: issue 38 asks for fewer than 10 of each kind in the whole
    /// description; fuzzing mixes examples in by chance, so a run may warn once more than another).
    struct Part: Sendable, CustomTestStringConvertible {
        let arguments: [String]
        let mostWarned: Int

        init(_ arguments: [String], mostWarned: Int) {
            self.arguments = arguments
            self.mostWarned = mostWarned
        }

        var testDescription: String { arguments.joined(separator: " ") }
    }

    /// The warnings bounded: generated valid requests all refused ("rejected"), or all 404.
    static let warningKinds = ["validation_mismatch", "missing_test_data"]

    /// Writes schemathesis's configuration for `cluster` (Tests/Peers/schemathesis-config.py): the
    /// servers' variables name the run's app and key, so the document's base URL is the run's, and
    /// the document's examples (and `seeded` values, in threes) steer the fuzzing phase.
    static func configuration(_ cluster: TestCluster, in scratch: URL, seeded: [String]) async throws -> URL {
        let document = scratch.appendingPathComponent("openapi.json")
        try await HTTPTestClient.send(.GET, cluster.gatewayURL + "/openapi.json").body.write(to: document)
        let prefix = cluster.prefix(.serverCode).split(separator: "/").map(String.init)
        let run = try await ToolRun.run(
            ["python3", "Tests/Peers/schemathesis-config.py", document.path, prefix[0], prefix[1]] + seeded)
        guard run.status == 0 else { throw TestClusterFailure(description: "schemathesis-config.py: \(run.output)") }
        let config = scratch.appendingPathComponent("schemathesis.toml")
        try Data(run.output.utf8).write(to: config)
        return config
    }

    /// The report's warnings: operation labels by kind.
    static func warnings(in report: URL) throws -> [String: [String]] {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: report)) as? [String: Any]
        let warnings = json?["warnings"] as? [String: Any] ?? [:]
        return warnings.compactMapValues { $0 as? [String] }
    }

    @Test(arguments: parts) func noOperationAnswers5xxOrOutsideItsSchema(_ part: Part) async throws {
        // Mail goes to a real SMTP server (aiosmtpd): without a relay, sending is 503 by design.
        try await SMTPSink.with { sink async throws in
            let mail = ["BAAS_SMTP_HOST": "127.0.0.1", "BAAS_SMTP_PORT": "\(sink.port)", "BAAS_SMTP_STARTTLS": "off"]
            try await TestCluster.with(environment: mail, timeLimit: .seconds(900)) { cluster async throws in
                // schemathesis and hypothesis keep caches in the working directory: not the repository's.
                let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "schemathesis-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: scratch) }
                try await DocumentExampleSeed.seed(cluster)
                // Geo points get ids the server chooses: one the removal routes take, one the others.
                let point = try await DocumentExampleSeed.seedGeoPoint(cluster)
                let removed = try await DocumentExampleSeed.seedGeoPoint(cluster)
                let seeded = [
                    "/geo/points/", "path.id", point, "DELETE /geo/points/", "path.id", removed, "/geo/fence/",
                    "body.objectId", point,
                ]
                let config = try await Self.configuration(cluster, in: scratch, seeded: seeded)
                let report = scratch.appendingPathComponent("report.json")
                let run = try await ToolRun.run(
                    [
                        "schemathesis", "--config-file", config.path, "run", cluster.gatewayURL + "/openapi.json",
                        "--url", cluster.gatewayURL + cluster.prefix(.serverCode),
                        "--checks", "not_a_server_error,response_schema_conformance", "--max-examples", Self.examples,
                        "--seed", "20261126", "--workers", "1", "--request-timeout", "90", "--suppress-health-check",
                        "all", "--generation-database", "none", "--no-color", "--report", "json",
                        "--report-json-path", report.path,
                    ] + part.arguments, directory: scratch, timeLimit: .seconds(420))
                #expect(run.status == 0, "\(run.output.suffix(12_000))")
                #expect(
                    run.output.contains(" passed") && !run.output.contains(" failed,"), "\(run.output.suffix(4_000))")
                let warnings = try Self.warnings(in: report)
                for kind in Self.warningKinds {
                    let operations = (warnings[kind] ?? []).sorted()
                    print("schemathesis \(part.testDescription): \(operations.count) \(kind) \(operations)")
                    #expect(
                        operations.count <= part.mostWarned, "\(kind): \(operations.count) operations \(operations)")
                }
            }
        }
    }
}
