// The front door: `import StoragePolicy` is all an app or a script writes. The engine lives in layers below
// (Docs/architecture.md); their public types (Policy, Plan, Action, FileStatus, the reports, ...) are part of
// this module's API, so they are re-exported here, once, rather than asking every client to know the layering.

@_exported import StoragePolicyFileSystem
@_exported import StoragePolicyModel
@_exported import StoragePolicyPlan
@_exported import StoragePolicyEvaluation
@_exported import StoragePolicyApply
@_exported import StoragePolicyReports
