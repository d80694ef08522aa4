import { z } from 'zod';
import type { Schedules } from '../../app/schedules/schedules.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { uuidSchema } from '../../http/validation.js';
import { scheduleRunOf, scheduleView } from './presenters.js';
import {
  CreateScheduleBody,
  ProjectionQuery,
  ScheduleProjectionSchema,
  ScheduleRunPageSchema,
  ScheduleRunsQuery,
  SchedulePageSchema,
  ScheduleSchema,
  SchedulesQuery,
  UpdateScheduleBody,
} from './schemas.js';

const CREATE_DESCRIPTION =
  'A send or a move that runs by itself (docs/schedules.md): once at `executeAt`, or monthly on a day, on the last business day, weekly, or by a cron ' +
  'expression, in Bogotá time; `businessDayRule` says what a run on a Saturday, Sunday or Colombian holiday does. Each run is an ordinary send ' +
  '(POST /transfers/send: decided by the approval policy in force at the run, its funds reserved at the run) or move (POST /wallets/moves), made under ' +
  'the key `schedule:<id>:<nominal time, Bogotá>`, so a restart, a second replica or a catch-up after an outage never makes a run twice. A run that ' +
  'cannot be made (e.g. `INSUFFICIENT_BALANCE`) fails with its reason, the webhook `schedule.run_failed`, and the schedule goes on. The runs act as ' +
  'the API key that created (or last changed) the schedule: revoked, the next run fails (`SCHEDULE_AUTHOR_INACTIVE`) and the schedule pauses. ' +
  'Nothing is checked against the balance now: `GET /schedules/projection` shows what the next runs need.';

const idParams = z.object({ id: uuidSchema() });

/** /schedules: scheduled and recurring payouts and moves (the gateway's scheduler starts the runs). */
export function scheduleRoutes(schedules: Schedules): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/schedules',
      operationId: 'createSchedule',
      tags: ['Schedules'],
      summary: 'Schedule a send or a move, once or recurring',
      description: CREATE_DESCRIPTION,
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'FINANCIAL',
      idempotent: true,
      body: CreateScheduleBody,
      responses: { 201: { description: 'The schedule, ACTIVE (COMPLETED when its rule names no run from now on).', schema: ScheduleSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ body, call }) => ({ status: 201, body: scheduleView(await schedules.create(call, body)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/schedules',
      operationId: 'listSchedules',
      tags: ['Schedules'],
      summary: 'Your schedules, newest first',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      query: SchedulesQuery,
      responses: { 200: { description: 'A page of schedules.', schema: SchedulePageSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const r = await schedules.list(call, query);
        return { status: 200, body: { items: r.items.map(scheduleView), nextCursor: r.nextCursor } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/schedules/projection',
      operationId: 'projectSchedules',
      tags: ['Schedules'],
      summary: 'What the next runs need, against your balances now',
      description:
        "Plays your ACTIVE schedules' runs due in the next `days` against the wallets' available balances: each wallet's outflow, inflow, lowest balance and " +
        'shortfall (fees not counted), each run with the balance after it, and a warning per wallet short of funds.',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      query: ProjectionQuery,
      responses: { 200: { description: 'The projection.', schema: ScheduleProjectionSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => ({ status: 200, body: await schedules.projection(call, query.days) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/schedules/{id}',
      operationId: 'getSchedule',
      tags: ['Schedules'],
      summary: 'One schedule, with its next runs',
      description: "Unknown ids, malformed ones and other companies' schedules answer the same 404 `SCHEDULE_NOT_FOUND`.",
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      params: idParams,
      paramErrors: { id: 'SCHEDULE_NOT_FOUND' },
      responses: { 200: { description: 'The schedule.', schema: ScheduleSchema } },
      errors: ['SCHEDULE_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 200, body: scheduleView(await schedules.get(call, params.id)) }),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/schedules/{id}',
      operationId: 'updateSchedule',
      tags: ['Schedules'],
      summary: 'Pause, resume or change a schedule',
      description:
        '`status` PAUSED stops the runs; ACTIVE resumes them from the next one due from now (runs that fell due while paused do not happen and are not counted). ' +
        'A new `endAt`, `maxRuns` or `action` applies to the next runs. The key that makes the change becomes the one the runs act as. ' +
        'A CANCELLED or COMPLETED schedule answers 409 `SCHEDULE_ENDED`.',
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'FINANCIAL',
      params: idParams,
      paramErrors: { id: 'SCHEDULE_NOT_FOUND' },
      body: UpdateScheduleBody,
      responses: { 200: { description: 'The schedule as it is now.', schema: ScheduleSchema } },
      errors: ['SCHEDULE_NOT_FOUND', 'SCHEDULE_ENDED', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, call }) => ({ status: 200, body: scheduleView(await schedules.update(call, params.id, body)) }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/schedules/{id}',
      operationId: 'cancelSchedule',
      tags: ['Schedules'],
      summary: 'Cancel a schedule',
      description: 'No further runs; a run already started is not undone (its transfer or move goes on). Cancelling again answers the schedule as it is.',
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'FINANCIAL',
      params: idParams,
      paramErrors: { id: 'SCHEDULE_NOT_FOUND' },
      responses: { 200: { description: 'The schedule, CANCELLED (or COMPLETED, when it had ended).', schema: ScheduleSchema } },
      errors: ['SCHEDULE_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 200, body: scheduleView(await schedules.cancel(call, params.id)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/schedules/{id}/runs',
      operationId: 'listScheduleRuns',
      tags: ['Schedules'],
      summary: "A schedule's runs, newest first",
      description: 'Each run with what it made (`transferId` or `walletMoveId`) or why it failed (`error`).',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      params: idParams,
      paramErrors: { id: 'SCHEDULE_NOT_FOUND' },
      query: ScheduleRunsQuery,
      responses: { 200: { description: 'A page of runs.', schema: ScheduleRunPageSchema } },
      errors: ['SCHEDULE_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, query, call }) => {
        const r = await schedules.runs(call, params.id, query);
        return { status: 200, body: { items: r.items.map(scheduleRunOf), nextCursor: r.nextCursor } };
      },
    }),
  ];
}
