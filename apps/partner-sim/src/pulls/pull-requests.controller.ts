import { Controller, Get, Param, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SignatureGuard } from '../auth/signature.guard';
import { PullRequestsService } from './pull-requests.service';

@Controller('partners/v1/pull_requests')
@UseGuards(SignatureGuard)
export class PullRequestsController {
  constructor(private readonly pullRequests: PullRequestsService) {}

  @Post()
  create(@Req() req: FastifyRequest, @Res() reply: FastifyReply): void {
    this.pullRequests.create(req, reply);
  }

  @Get(':request_id')
  show(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('request_id') requestId: string): Promise<void> {
    return this.pullRequests.show(req, reply, requestId);
  }
}
