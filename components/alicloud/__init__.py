"""Alibaba Cloud components: VPC, admin security group, ACK Pro, node pools, OSS, RRSA."""
