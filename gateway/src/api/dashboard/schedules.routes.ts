import { z } from 'zod';
import type { Schedules } from '../../app/schedules/schedules.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { uuidSchema } from '../../http/validation.js';
import { scheduleRunOf, scheduleView } from '../schedules/presenters.js';
import {
  ProjectionQuery,
  ScheduleProjectionSchema,
  ScheduleRunPageSchema,
  ScheduleRunsQuery,
  SchedulePageSchema,
  ScheduleSchema,
  SchedulesQuery,
} from '../schedules/schemas.js';

const idParams = z.object({ id: uuidSchema() });
const NOT_FOUND_NOTE = "Unknown ids, malformed ones and other companies' schedules answer the same 404 `SCHEDULE_NOT_FOUND`.";

/**
 * «Pagos programados» in the dashboard (docs/schedules.md), read only and for any role: the
 * company's schedules, one schedule's runs and the projection, as GET /schedules… answer them.
 * Schedules are created and changed through the API only (an API key is their author).
 */
export function dashboardScheduleRoutes(schedules: Schedules): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/dashboard/schedules',
      operationId: 'dashboardListSchedules',
      tags: ['Dashboard'],
      summary: "The company's schedules, newest first, with their next runs (filter: status; cursor)",
      auth: { kind: 'session' },
      rateClass: 'READS',
      query: SchedulesQuery,
      responses: { 200: { description: 'A page of schedules, as GET /schedules.', schema: SchedulePageSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => {
        const r = await schedules.list(call, query);
        return { status: 200, body: { items: r.items.map(scheduleView), nextCursor: r.nextCursor } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/dashboard/schedules/projection',
      operationId: 'dashboardProjectSchedules',
      tags: ['Dashboard'],
      summary: 'What the next runs of the ACTIVE schedules need, against the balances now (as GET /schedules/projection)',
      auth: { kind: 'session' },
      rateClass: 'READS',
      query: ProjectionQuery,
      responses: { 200: { description: 'The projection, with the warnings in Spanish.', schema: ScheduleProjectionSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => ({ status: 200, body: await schedules.projection(call, query.days) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/dashboard/schedules/{id}',
      operationId: 'dashboardGetSchedule',
      tags: ['Dashboard'],
      summary: 'One schedule of the company, with its next runs',
      description: NOT_FOUND_NOTE,
      auth: { kind: 'session' },
      rateClass: 'READS',
      params: idParams,
      paramErrors: { id: 'SCHEDULE_NOT_FOUND' },
      responses: { 200: { description: 'The schedule.', schema: ScheduleSchema } },
      errors: ['SCHEDULE_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
      handler: async ({ params, call }) => ({ status: 200, body: scheduleView(await schedules.get(call, params.id)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/dashboard/schedules/{id}/runs',
      operationId: 'dashboardListScheduleRuns',
      tags: ['Dashboard'],
      summary: "A schedule's runs, newest first: what each made (transfer or move) or why it failed",
      description: NOT_FOUND_NOTE,
      auth: { kind: 'session' },
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
