// A small web client built on the types generated from Langcamp's OpenAPI document
// (src/schema.d.ts, written by `npm run generate`; not committed). It signs in with a
// one-time code, refreshes its tokens on a 401, waits out a 429 or 503, and takes a
// placement test. `tsc --strict` checks every path, parameter, body and answer against
// the document, so a change of the document that breaks a client breaks this build.
import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./schema";

type Schemas = components["schemas"];
export type User = Schemas["User"];
export type Course = Schemas["Course"];
export type TestResult = Schemas["TestResult"];
export type Failure = Schemas["ErrorEnvelope"];

/** A failed call: the envelope's stable `code`, its messages, and the request id to quote. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly failure: Failure | undefined,
  ) {
    super(failure ? `${failure.code}: ${failure.errors.join("; ")}` : `HTTP ${status}`);
  }
  get code(): string | undefined {
    return this.failure?.code;
  }
  get requestId(): string | null | undefined {
    return this.failure?.requestId;
  }
}

function unwrap<T>(result: { data?: { data: T }; error?: Failure; response: Response }): T {
  if (result.data !== undefined) {
    return result.data.data;
  }
  throw new ApiError(result.response.status, result.error);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class Langcamp {
  private readonly api;
  private accessToken: string | undefined;
  private refreshToken: string | undefined;

  constructor(baseUrl: string) {
    this.api = createClient<paths>({ baseUrl });
    const auth: Middleware = {
      onRequest: ({ request }) => {
        if (this.accessToken !== undefined) {
          request.headers.set("Authorization", `Bearer ${this.accessToken}`);
        }
        return request;
      },
    };
    this.api.use(auth);
  }

  /** Runs `call`; 429 and 503 are retried after `Retry-After`, a 401 once after a refresh. */
  private async send<T>(call: () => Promise<{ data?: { data: T }; error?: Failure; response: Response }>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const result = await call();
      const status = result.response.status;
      if ((status === 429 || status === 503) && attempt < 3) {
        const seconds = Number(result.response.headers.get("Retry-After") ?? "1");
        await sleep(Math.max(1, seconds) * 1000);
        continue;
      }
      if (status === 401 && result.error?.code === "TOKEN_INVALID" && this.refreshToken !== undefined && attempt === 0) {
        await this.refresh();
        continue;
      }
      return unwrap(result);
    }
  }

  /** Step 1 of signing in: the server mails a 6-digit code (it answers the same for any address). */
  async requestCode(email: string): Promise<number> {
    const sent = await this.send(() => this.api.POST("/auth/otp/request", { body: { email } }));
    return sent.expiresInSeconds;
  }

  /** Step 2: the code for tokens. `registrationComplete` false means the profile is still to fill in. */
  async verify(email: string, code: string): Promise<{ user: User; registrationComplete: boolean }> {
    const signedIn = await this.send(() => this.api.POST("/auth/otp/verify", { body: { email, code } }));
    this.accessToken = signedIn.accessToken;
    this.refreshToken = signedIn.refreshToken;
    return { user: signedIn.user, registrationComplete: signedIn.registrationComplete };
  }

  /** Rotates the tokens; the old refresh token is used up. */
  async refresh(): Promise<void> {
    const refreshToken = this.refreshToken;
    if (refreshToken === undefined) {
      throw new Error("not signed in");
    }
    const result = await this.api.POST("/auth/refresh", { body: { refreshToken } });
    const pair = unwrap(result);
    this.accessToken = pair.accessToken;
    this.refreshToken = pair.refreshToken;
  }

  async completeRegistration(profile: Schemas["RegistrationInput"]): Promise<void> {
    await this.send(() => this.api.POST("/auth/complete-registration", { body: profile }));
  }

  async me(): Promise<User> {
    return this.send(() => this.api.GET("/me"));
  }

  async courses(targetLanguage?: string): Promise<Course[]> {
    const query = targetLanguage === undefined ? {} : { targetLanguage };
    return this.send(() => this.api.GET("/courses", { params: { query } }));
  }

  async submitTest(testId: string, answers: Schemas["SubmittedAnswer"][]): Promise<TestResult> {
    return this.send(() =>
      this.api.POST("/proficiency-tests/{id}/submit", { params: { path: { id: testId } }, body: { answers } }),
    );
  }
}

/** The whole flow, as a web page would run it. */
export async function example(baseUrl: string, email: string, askForCode: () => Promise<string>): Promise<TestResult | undefined> {
  const client = new Langcamp(baseUrl);
  await client.requestCode(email);
  const { registrationComplete } = await client.verify(email, await askForCode());
  if (!registrationComplete) {
    await client.completeRegistration({
      name: "Ana Silva",
      age: 27,
      gender: "female",
      country: "Portugal",
      countryCode: "+351",
      phoneNumber: "912345678",
    });
  }
  const me = await client.me();
  console.log(`signed in as ${me.email} (${me.role})`);
  for (const course of await client.courses("de")) {
    console.log(`${course.title}: ${course.level ?? "any level"}`);
  }
  try {
    return await client.submitTest("0190f1a2-0000-7000-8000-0000000000ab", [{ questionIndex: 0, selectedOptionIndex: 1 }]);
  } catch (error) {
    if (error instanceof ApiError && error.code === "NOT_FOUND") {
      console.log(`no such test (request ${error.requestId ?? "?"})`);
      return undefined;
    }
    throw error;
  }
}
