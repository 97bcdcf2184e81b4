// What every refusal of the gateway looks like (docs/api.md, "Errors"): problem JSON with its code, the
// request's id and never a stack trace.
export function expectProblem(res: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toEqual(
    expect.objectContaining({
      type: expect.any(String),
      title: expect.any(String),
      status,
      detail: expect.any(String),
      code,
      request_id: res.headers.get('x-request-id'),
    }),
  );
  expect(JSON.stringify(res.body)).not.toMatch(/at .*\.(ts|js):\d+/); // never a stack trace
}
