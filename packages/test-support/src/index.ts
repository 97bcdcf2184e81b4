// Shared by the components' tests (never by their code): fakes at the gRPC boundary, so a component
// test runs one component for real against real FerretDB, NATS and Redis with its peers faked.
export * from './fake-peer';
export * from './fake-services';
export * from './answer-gate';
export * from './databases';
export * from './bounded-stop';
