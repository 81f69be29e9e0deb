import ServiceRuntime
import StreamTestSupport

// stream-test-service: the streaming test backend as a process of its own, in files-service's
// place, for the benchmark's large-body case: `serve`, `migrate`.
await ServiceCommand.exitOnError {
    try await ServiceCommand.main(StreamTestService.self, arguments: Array(CommandLine.arguments.dropFirst()))
}
